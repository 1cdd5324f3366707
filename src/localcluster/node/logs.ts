// `kubectl logs` for the node simulator's pods: the local cluster has no kubelet to ask, so its
// `pods/log` subresource reads the files the simulator writes, one per container run
// (`<dataDir>/<first 12 hex digits of the pod uid>/logs/<container>/<restart count>.log`).
import { createReadStream } from 'node:fs';
import { open, readdir } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { KObject } from '../status.js';

export interface PodLogQuery {
  /** Default: the pod's only (first) container. */
  container?: string;
  /** The container's previous run instead of its current one. */
  previous?: boolean;
  /** Only the last lines. */
  tailLines?: number;
}

/** The directory of a pod's files on this node. */
export function podDir(dataDir: string, uid: string): string {
  return path.join(dataDir, uid.replace(/-/g, '').slice(0, 12));
}

/** A log's last lines are read from its end, at most this many bytes of them (a sandbox writes what it likes). */
export const MAX_TAIL_BYTES = 4 * 1024 * 1024;
const TAIL_BLOCK = 64 * 1024;

/**
 * Reads a pod's container log as the kubelet would answer it: its last lines as text, or the whole
 * run as a stream (never held); undefined when that run left none.
 */
export function podLogReader(dataDir: string): (pod: KObject, query: PodLogQuery) => Promise<string | Readable | undefined> {
  return async (pod, query) => {
    const uid = pod.metadata?.uid;
    const containers = (pod.spec as { containers?: { name: string }[] } | undefined)?.containers ?? [];
    const container = query.container ?? containers[0]?.name;
    if (!uid || !container) return undefined;
    const dir = path.join(podDir(dataDir, uid), 'logs', container);
    const runs = (await readdir(dir).catch(() => [] as string[]))
      .map((f) => /^(\d+)\.log$/.exec(f)?.[1]).filter((n): n is string => n !== undefined).map(Number).sort((a, b) => a - b);
    const run = runs.at(query.previous ? -2 : -1);
    if (run === undefined) return undefined;
    const file = path.join(dir, `${run}.log`);
    if (query.tailLines === undefined) {
      const handle = await open(file, 'r').catch(() => undefined);
      return handle && createReadStream('', { fd: handle });
    }
    return lastLines(file, query.tailLines);
  };
}

/** The last `count` lines of `file`, read backwards a block at a time up to MAX_TAIL_BYTES; undefined when it cannot be read. */
async function lastLines(file: string, count: number): Promise<string | undefined> {
  const handle = await open(file, 'r').catch(() => undefined);
  if (!handle) return undefined;
  try {
    const { size } = await handle.stat();
    const blocks: Buffer[] = [];
    let start = size;
    let newlines = 0;
    // one newline more than lines wanted (the one before the first of them), or the start of the file
    while (start > 0 && newlines <= count && size - start < MAX_TAIL_BYTES) {
      const length = Math.min(TAIL_BLOCK, start, MAX_TAIL_BYTES - (size - start));
      start -= length;
      const block = Buffer.alloc(length);
      await handle.read(block, 0, length, start);
      blocks.unshift(block);
      for (const byte of block) if (byte === 10) newlines++;
    }
    const lines = Buffer.concat(blocks).toString('utf8').split('\n');
    if (lines.at(-1) === '') lines.pop();
    if (start > 0 && lines.length > 1) lines.shift(); // cut at the bound: not a whole line (unless it is all there is)
    return lines.slice(-count).map((l) => `${l}\n`).join('');
  } finally {
    await handle.close();
  }
}
