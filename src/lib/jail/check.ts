// Can sandboxes be isolated here? What is missing, said so that a person can act on it. Checked
// by `svc dev` at start (src/main/isolation-check.ts prints it) and by every provider before it
// starts a sandbox (a session then fails with this message instead of running unisolated).
import { accessSync, constants, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Jail } from './index.js';
import { isRunning } from '../proc.js';
import { run } from './net.js';

/** Programs the jail runs, and the Debian package of each. */
export const REQUIRED_COMMANDS: readonly { command: string; pkg: string }[] = [
  { command: 'bwrap', pkg: 'bubblewrap' },
  { command: 'ip', pkg: 'iproute2' },
  { command: 'nft', pkg: 'nftables' },
  { command: 'nsenter', pkg: 'util-linux' },
  { command: 'setpriv', pkg: 'util-linux' },
  { command: 'prlimit', pkg: 'util-linux' },
  { command: 'chown', pkg: 'coreutils' },
];

export interface IsolationReport {
  ok: boolean;
  /** What is missing or failed, one line each. */
  problems: string[];
}

function onPath(command: string): boolean {
  for (const dir of (process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin').split(path.delimiter).concat(['/usr/sbin', '/sbin'])) {
    try {
      accessSync(path.join(dir, command), constants.X_OK);
      return true;
    } catch { /* next */ }
  }
  return false;
}

/** One line for people: what is missing and how to get it (Debian packages). */
export function describeProblems(report: IsolationReport): string {
  return report.problems.join('; ');
}

/**
 * The owner of the trials' slots: one folder for every process's trial, each slot named after its
 * process, so that a trial cut off by a kill (svc dev killed while it starts) is removed by the next.
 */
export const CHECK_OWNER = path.join(os.tmpdir(), 'svc-isolation-check');
const CHECK_KEY = /^check-(\d+)$/;

let cached: Promise<IsolationReport> | undefined;

/**
 * Root, the programs, and a trial: a jailed `true` in a network namespace of its own, as a
 * sandbox runs. Cached once it succeeds; a failure is checked again next time (a package
 * installed meanwhile counts).
 */
export function checkIsolation(): Promise<IsolationReport> {
  cached ??= probe().then((report) => {
    if (!report.ok) cached = undefined;
    return report;
  });
  return cached;
}

async function probe(): Promise<IsolationReport> {
  const problems: string[] = [];
  if (process.platform !== 'linux') return { ok: false, problems: [`sandbox isolation needs Linux (namespaces, bubblewrap, nftables); this is ${process.platform}`] };
  if (process.getuid?.() !== 0) {
    problems.push('sandbox isolation needs root (it creates network namespaces, veth pairs and firewall rules, and runs each sandbox as its own uid): run svc dev as root');
  }
  const missing = REQUIRED_COMMANDS.filter((c) => !onPath(c.command));
  // one line per missing program, each saying how to get it
  for (const c of missing) problems.push(`${c.command} is missing: install it with \`apt-get install ${c.pkg}\``);
  if (!missing.length) {
    const version = /(\d+)\.(\d+)/.exec(await run('bwrap', ['--version']).catch(() => '')) ?? [];
    if (Number(version[1] ?? 0) === 0 && Number(version[2] ?? 0) < 8) problems.push(`bubblewrap 0.8 or newer is needed (--disable-userns); found ${version[0] ?? 'an unknown version'}`);
  }
  if (problems.length) return { ok: false, problems };
  mkdirSync(CHECK_OWNER, { recursive: true, mode: 0o700 });
  const jail = new Jail({ apiPorts: [], toolchain: [] });
  try {
    await jail.networks.ensureGateway();
    // (best effort: leftovers that will not go are no reason to say sandboxes cannot be isolated)
    await jail.sweep(CHECK_OWNER, (slot) => {
      const pid = Number(CHECK_KEY.exec(slot.key)?.[1]);
      return !pid || isRunning(pid);
    }).catch(() => undefined);
    const slot = await jail.allocate(CHECK_OWNER, `check-${process.pid}`, []);
    try {
      const child = await jail.spawn(slot, { argv: ['/bin/sh', '-c', 'test "$(id -u)" = 1000 && ! touch /usr/.svc-probe 2>/dev/null'], env: { PATH: '/usr/bin:/bin' }, cwd: '/', volumes: [], stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr!.on('data', (c: Buffer) => { stderr += c.toString(); });
      const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
      if (code !== 0) problems.push(`a trial sandbox failed (exit ${code}): ${stderr.trim() || 'no output'}`);
    } finally {
      await jail.release(slot);
    }
  } catch (error) {
    problems.push(`a trial sandbox could not be set up: ${(error as Error).message}`);
  }
  return { ok: problems.length === 0, problems };
}
