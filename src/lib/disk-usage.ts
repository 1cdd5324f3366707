// How much disk folders take, as the kubelet measures a pod's ephemeral storage (du: blocks, one
// file system, hard links once): the process provider's and the node simulator's evictions.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';

/** Bytes of disk `folders` take; undefined when none exists or du fails. */
export function diskUsage(folders: string[]): Promise<number | undefined> {
  const present = folders.filter((f) => existsSync(f));
  // (du without a folder measures the caller's working directory)
  if (present.length === 0) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    execFile('du', ['-sxB1', '--total', ...present], { timeout: 120_000, maxBuffer: 1 << 20 }, (error, stdout) => {
      const total = /^(\d+)\s+total$/m.exec(stdout ?? '')?.[1];
      resolve(total === undefined ? undefined : Number(total));
    });
  });
}
