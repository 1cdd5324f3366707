import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DATA_DIR_LOCK, DataDirInUseError, lockDataDir } from './data-dir-lock.js';

let dir: string;
beforeEach(() => { dir = mkdtempSync(path.join(os.tmpdir(), 'svc-lock-')); });
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const lockFile = () => path.join(dir, DATA_DIR_LOCK);
const held = () => JSON.parse(readFileSync(lockFile(), 'utf8')) as { pid: number; bootId: string; startTime: string };

describe('lockDataDir', () => {
  it('one holder at a time: a live holder is refused, naming its pid; given back, the directory is free again', () => {
    const unlock = lockDataDir(dir);
    expect(held().pid).toBe(process.pid);
    expect(() => lockDataDir(dir)).toThrow(DataDirInUseError);
    expect(() => lockDataDir(dir)).toThrow(`svc dev is already running on ${dir} (pid ${process.pid})`);
    unlock();
    expect(existsSync(lockFile())).toBe(false);
    lockDataDir(dir)();
    expect(readdirSync(dir)).toEqual([]); // no file of the lock's own left
  });

  it('takes over the lock of a holder that died (kill -9), of a pid reused since, or one nobody can read', () => {
    const me = (lockDataDir(dir), held());
    rmSync(lockFile());
    const dead = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' });
    for (const stale of [
      { ...me, pid: Number(dead.stdout.trim()) }, // gone
      { ...me, startTime: '1' }, // this pid, but another process's start: the pid was reused
      { ...me, bootId: 'another boot' },
    ]) {
      writeFileSync(lockFile(), JSON.stringify(stale));
      const unlock = lockDataDir(dir);
      expect(held()).toEqual(me);
      unlock();
    }
    writeFileSync(lockFile(), 'not json');
    lockDataDir(dir)();
  });

  it('gives back only its own lock: one taken over since stays', () => {
    const unlock = lockDataDir(dir);
    const other = { pid: 1, bootId: held().bootId, startTime: '0' };
    writeFileSync(lockFile(), JSON.stringify(other));
    unlock();
    expect(held()).toEqual(other);
  });
});
