// Linux process facts from /proc (proc(5)), for the jail, svc-agent and tests: one parser of
// /proc/<pid>/stat, whose second field (the command) may hold spaces and parentheses.
import { readdirSync, readFileSync } from 'node:fs';

/** The fields of /proc/<pid>/stat from the 3rd (state) on: field N is at index N - 3. Undefined when the process is gone. */
export function statFields(pid: number | 'self'): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/**
 * Whether `pid` runs: it exists and is no zombie waiting for its reaper. Without /proc (not
 * Linux) the signal probe decides.
 */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const state = statFields(pid)?.[0];
  return state === undefined ? process.platform !== 'linux' : state !== 'Z';
}

/** The parent of `pid` (0 when it is gone). */
export function parentPid(pid: number): number {
  return Number(statFields(pid)?.[4 - 3] ?? 0);
}

/** The children of every process, oldest first (by start time, field 22). */
export function childrenMap(): Map<number, number[]> {
  const found = new Map<number, { pid: number; started: number }[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(Number(entry));
    if (!fields) continue; // gone
    const ppid = Number(fields[4 - 3]);
    const list = found.get(ppid) ?? [];
    list.push({ pid: Number(entry), started: Number(fields[22 - 3]) });
    found.set(ppid, list);
  }
  return new Map([...found].map(([ppid, list]) => [ppid, list.sort((a, b) => a.started - b.started || a.pid - b.pid).map((c) => c.pid)]));
}

/** `root` and every process below it, level by level. */
export function processTree(root: number, children = childrenMap()): number[] {
  const found = [root];
  for (let i = 0; i < found.length; i++) found.push(...(children.get(found[i]!) ?? []));
  return found;
}
