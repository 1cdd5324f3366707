// One `svc dev` per data directory. A second one on the same directory ran a second local cluster
// on the same journal (both appending to it) and a second operator on the same sandboxes, and its
// stop stopped the first one's sandboxes. DIR/svc-dev.lock names its holder by pid, boot and start
// time: a holder that died (`kill -9`), or a pid reused since, holds nothing.
import { linkSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { isRunning, statFields } from '../lib/proc.js';

export const DATA_DIR_LOCK = 'svc-dev.lock';

interface Holder { pid: number; bootId: string; startTime: string }

/** A running process's start time (clock ticks since boot, /proc/PID/stat field 22), or null when it is gone. */
function startTimeOf(pid: number): string | null {
  return isRunning(pid) ? statFields(pid)?.[22 - 3] ?? null : null;
}

function bootId(): string {
  try { return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim(); } catch { return ''; }
}

function readHolder(file: string): Holder | null {
  try {
    const holder = JSON.parse(readFileSync(file, 'utf8')) as Partial<Holder>;
    return typeof holder.pid === 'number' && typeof holder.bootId === 'string' && typeof holder.startTime === 'string' ? holder as Holder : null;
  } catch {
    return null;
  }
}

const sameHolder = (a: Holder | null, b: Holder) => a !== null && a.pid === b.pid && a.bootId === b.bootId && a.startTime === b.startTime;

export class DataDirInUseError extends Error {}

/**
 * Takes `dataDir` for this process; returns what gives it back (only while the lock is still
 * this process's). DataDirInUseError when a live svc dev holds it.
 */
export function lockDataDir(dataDir: string): () => void {
  const file = path.join(dataDir, DATA_DIR_LOCK);
  const me: Holder = { pid: process.pid, bootId: bootId(), startTime: startTimeOf(process.pid) ?? '' };
  const text = `${JSON.stringify(me)}\n`;
  // written whole, then linked in place: nobody reads a half-written lock (where the filesystem
  // has no hard links, created exclusively instead)
  const written = `${file}.${process.pid}`;
  writeFileSync(written, text, { mode: 0o600 });
  const take = () => {
    try {
      linkSync(written, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw error;
      writeFileSync(file, text, { flag: 'wx', mode: 0o600 });
    }
  };
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        take();
        return () => { if (sameHolder(readHolder(file), me)) rmSync(file, { force: true }); };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const holder = readHolder(file);
      if (holder && holder.bootId === me.bootId && startTimeOf(holder.pid) === holder.startTime) {
        throw new DataDirInUseError(`svc dev is already running on ${dataDir} (pid ${holder.pid}): stop it first, or use another --data-dir`);
      }
      rmSync(file, { force: true }); // its holder is gone: the directory is free
    }
    throw new DataDirInUseError(`could not take ${file}: another svc dev is starting on ${dataDir}`);
  } finally {
    rmSync(written, { force: true });
  }
}
