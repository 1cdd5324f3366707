// Every process of the sandbox, for the stop (docs/daemon.md "Stop"): the engine's process group,
// and what its tools started in a session of their own (setsid, nohup, daemonized servers),
// found by the engine home in their environment (Linux /proc). A process that cleared its
// environment is out of reach here; a PID namespace (the sandbox pod, the jail) ends it with the
// sandbox.
import { readdirSync, readFileSync } from 'node:fs';
import { isRunning, parentPid } from '../src/lib/proc.js';

/** This process and its ancestors: never part of the sandbox's processes to end. */
function selfAndAncestors(): Set<number> {
  const chain = new Set<number>([process.pid]);
  let pid = process.ppid;
  while (pid > 1 && !chain.has(pid)) {
    chain.add(pid);
    pid = parentPid(pid);
  }
  return chain;
}

/** Pids (not this process nor its ancestors) whose environment carries `HOME=<home>`. */
export function processesWithHome(home: string): number[] {
  const marker = Buffer.from(`HOME=${home}\0`);
  const found: number[] = [];
  const excluded = selfAndAncestors();
  let entries: string[];
  try { entries = readdirSync('/proc'); } catch { return found; }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || excluded.has(Number(entry))) continue;
    try {
      const environ = readFileSync(`/proc/${entry}/environ`);
      if (environ.subarray(0, marker.length).equals(marker) || environ.includes(Buffer.concat([Buffer.from('\0'), marker]))) found.push(Number(entry));
    } catch { /* gone, or not ours to read */ }
  }
  return found;
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try { process.kill(pid, sig); } catch { /* gone, or not ours */ }
}

/** SIGTERM to every process carrying the engine home, SIGKILL to what is left after `graceMs`; resolves when none is left (or after one more second). */
export async function endProcessesWithHome(home: string, graceMs: number): Promise<number[]> {
  const first = processesWithHome(home);
  for (const pid of first) signal(pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && processesWithHome(home).some(isRunning)) await sleep(50);
  const left = processesWithHome(home).filter(isRunning);
  for (const pid of left) signal(pid, 'SIGKILL');
  const end = Date.now() + 1_000;
  while (Date.now() < end && processesWithHome(home).some(isRunning)) await sleep(20);
  return [...new Set([...first, ...left])];
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
