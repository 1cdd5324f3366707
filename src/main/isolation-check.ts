// `svc dev`'s check of sandbox isolation (docs/sandboxes.md): whether this machine can jail
// sandboxes, and what to tell the user when it cannot (or when they opted out).
import { checkIsolation, describeProblems } from '../lib/jail/check.js';
import { Jail } from '../lib/jail/index.js';

export type IsolationStatus =
  /** Sandboxes run jailed; the API must also listen on `gateway`. `limits`: what holds their tasks, CPU and memory. */
  | { mode: 'jail'; gateway: string; limits: string }
  /** Isolation was asked for and cannot be had: sessions refuse to start, saying `message`. */
  | { mode: 'unavailable'; message: string; problems: string[] }
  /** --unsafe-no-isolation. */
  | { mode: 'none' };

export const UNSAFE_WARNING = [
  '!!! WARNING: svc dev --unsafe-no-isolation: sandboxes are NOT isolated.',
  '!!! The agent (and anything a prompt, a repository or a webhook makes it run) runs as this user,',
  '!!! sees every file and process of this machine, svc\'s data directory and its admin token included,',
  '!!! and reaches every service on localhost. Use it only with agents and repositories you trust.',
];

/** Checks isolation (unless opted out) and makes the gateway address sandboxes reach the API at. */
export async function isolationStatus(unsafeNoIsolation: boolean): Promise<IsolationStatus> {
  if (unsafeNoIsolation) return { mode: 'none' };
  const report = await checkIsolation();
  if (!report.ok) return { mode: 'unavailable', message: describeProblems(report), problems: report.problems };
  const jail = new Jail({ apiPorts: [], toolchain: [] });
  await jail.networks.ensureGateway();
  return { mode: 'jail', gateway: jail.gateway, limits: await jail.limitsLine() };
}

/** What svc dev prints about it. */
export function isolationLines(status: IsolationStatus): string[] {
  switch (status.mode) {
    case 'jail': return [
      `svc dev: sandboxes are isolated (own uid, namespaces and network; they reach the API at ${status.gateway})`,
      `svc dev: sandboxes have ${status.limits}`,
    ];
    case 'none': return UNSAFE_WARNING;
    case 'unavailable': return [
      ...status.problems.map((problem) => `svc dev: ERROR: sandboxes cannot be isolated on this machine: ${problem}.`),
      'svc dev: sessions will refuse to start until this is fixed (or start svc dev with --unsafe-no-isolation, which is unsafe).',
    ];
  }
}
