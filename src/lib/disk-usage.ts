// How much disk folders take, as the kubelet measures a pod's ephemeral storage (du: blocks, one
// file system, hard links once): the process provider's and the node simulator's evictions.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';

/** Bytes of disk `folders` take; undefined when none exists or du fails. */
export async function diskUsage(folders: string[]): Promise<number | undefined> {
  return (await diskUsages([folders]))[0];
}

/**
 * Bytes of disk each group of folders takes, in one du for all (every process spawned costs a
 * large parent, the operator, milliseconds of CPU: one per sandbox each pass was most of what a
 * live sandbox cost it at rest). A group whose folders are all missing, or that du could not
 * measure, is undefined. A file hard-linked into two groups counts for the first one only.
 */
export function diskUsages(groups: readonly (readonly string[])[]): Promise<(number | undefined)[]> {
  const present = groups.map((folders) => folders.filter((f) => existsSync(f)));
  const all = [...new Set(present.flat())];
  // (du without a folder measures the caller's working directory)
  if (all.length === 0) return Promise.resolve(groups.map(() => undefined));
  return new Promise((resolve) => {
    // a folder gone meanwhile makes du exit 1 and leaves its line out: the others still count
    execFile('du', ['-sxB1', '--', ...all], { timeout: 120_000, maxBuffer: 1 << 24 }, (_error, stdout) => {
      const bytes = new Map<string, number>();
      for (const line of (stdout ?? '').split('\n')) {
        const m = /^(\d+)\t(.*)$/.exec(line);
        if (m) bytes.set(m[2]!, Number(m[1]));
      }
      resolve(present.map((folders) => {
        const sizes = folders.map((f) => bytes.get(f)).filter((n): n is number => n !== undefined);
        return sizes.length === 0 ? undefined : sizes.reduce((a, b) => a + b, 0);
      }));
    });
  });
}
