// `svc dev [--data-dir DIR] [--api-port N] [--kube-port N] [--engine-command CMD] [--max-sessions N]
// [--fire-history N] [--session-history N] [--idle-timeout DURATION] [--provider process] [--sandbox-mount PATH[:ro|:rw]]... [--unsafe-no-isolation]`:
// the whole system on this machine (docs/dev.md, docs/sessions.md, docs/sandboxes.md). Runs until
// SIGINT/SIGTERM/SIGHUP, then stops every part cleanly.
import type { Command } from 'commander';
import { CliError, EXIT, keepRunningWithoutReader } from '../output.js';

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new CliError(`invalid port ${JSON.stringify(value)}: expected 0-65535 (0 = any free port)`);
  return n;
}

function hostPort(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new CliError(`invalid --sandbox-host-port ${JSON.stringify(value)}: expected 1-65535`);
  return n;
}

/** A parser of a whole number >= 0 for `flag`. */
function count(flag: string): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 0) throw new CliError(`invalid ${flag} ${JSON.stringify(value)}: expected a whole number >= 0`);
    return n;
  };
}

/** `90`, `90s`, `15m`, `2h` as seconds. */
export function durationSeconds(value: string): number {
  const m = /^(\d+)(s|m|h)?$/.exec(value.trim());
  const unit = { s: 1, m: 60, h: 3600 }[(m?.[2] ?? 's') as 's' | 'm' | 'h'];
  const n = m ? Number(m[1]) * unit : NaN;
  if (!Number.isInteger(n) || n < 1) throw new CliError(`invalid --idle-timeout ${JSON.stringify(value)}: expected a duration such as 90s, 15m or 2h`);
  return n;
}

function provider(value: string): 'process' | 'kubernetes' {
  if (value !== 'process' && value !== 'kubernetes') throw new CliError(`invalid --provider ${JSON.stringify(value)}: expected process or kubernetes`);
  return value;
}

export function registerDevCommand(program: Command): void {
  program
    .command('dev')
    .description('run the local cluster, the CRDs, the operator and the API on this machine')
    .option('--data-dir <dir>', 'where the cluster state, kubeconfig and env are kept', '.svc-dev')
    .option('--api-port <n>', 'port of the REST API (0 = any free port)', port, 8080)
    .option('--kube-port <n>', 'port of the local Kubernetes API (0 = any free port)', port, 6443)
    .option('--engine-command <cmd>', "the engine svc-agent runs in each sandbox ({port} is replaced); default: the pinned opencode")
    .option('--max-sessions <n>', 'concurrent sessions allowed (provisioning or running); default 10', count('--max-sessions'))
    .option('--fire-history <n>', 'finished trigger fires kept per trigger, older ones deleted; default 100', count('--fire-history'))
    .option('--session-history <n>', 'finished sessions a trigger started kept per trigger, older ones deleted with their branches unless a change request is open on them; default 0, every one kept', count('--session-history'))
    .option('--idle-timeout <duration>', 'stop a running session after this long without activity (e.g. 90s, 15m); default 30m', durationSeconds)
    .option('--provider <name>', 'sandbox provider: process (svc-agent as a local process) or kubernetes', provider, 'process')
    .option('--sandbox-mount <path[:ro|:rw]>', 'show a host path at the same path in every sandbox (read-only unless :rw; never the data directory); repeatable', (value: string, previous: string[]) => [...previous, value], [] as string[])
    .option('--sandbox-host-port <port>', 'let sandboxes reach this port of the host at their gateway address, where a service listens (e.g. a local model server); repeatable', (value: string, previous: number[]) => [...previous, hostPort(value)], [] as number[])
    .option('--unsafe-no-isolation', 'run sandboxes without isolation: the agent sees this machine as you do (UNSAFE)')
    .action(async (opts: { dataDir: string; apiPort: number; kubePort: number; engineCommand?: string; maxSessions?: number; fireHistory?: number; sessionHistory?: number; idleTimeout?: number; provider: 'process' | 'kubernetes'; sandboxMount: string[]; sandboxHostPort: number[]; unsafeNoIsolation?: boolean }) => {
      // its output going nowhere is no reason to stop: exiting then left its sandboxes running
      keepRunningWithoutReader();
      const { runDev } = await import('../../main/dev.js');
      const startStopped = new AbortController();
      const starting = runDev({
        signal: startStopped.signal,
        dataDir: opts.dataDir, apiPort: opts.apiPort, kubePort: opts.kubePort,
        engineCommand: opts.engineCommand, maxSessions: opts.maxSessions, fireHistory: opts.fireHistory, sessionHistory: opts.sessionHistory, idleTimeoutSeconds: opts.idleTimeout, provider: opts.provider,
        sandboxMounts: opts.sandboxMount, sandboxHostPorts: opts.sandboxHostPort, unsafeNoIsolation: opts.unsafeNoIsolation === true,
      });
      let stopping = false;
      // a signal during the start is a clean stop too: the start ends where it is and stops what
      // it started (a child that never comes up is not waited for); never the default action,
      // which orphans it
      const stop = async (why: string, code: number) => {
        if (stopping) return;
        stopping = true;
        process.stdout.write(`svc dev: ${why}, stopping...\n`);
        startStopped.abort(new Error(`svc dev was ${why} while it started`));
        const started = await starting.catch(() => null);
        await started?.stop();
        process.stdout.write('svc dev: stopped\n');
        process.exit(code);
      };
      process.on('SIGINT', () => void stop('interrupted', 0));
      process.on('SIGTERM', () => void stop('terminated', 0));
      // its terminal closed: as Ctrl-C, not the default action, which orphans what it started
      process.on('SIGHUP', () => void stop('hung up', 0));
      const dev = await starting.catch((error: unknown) => {
        if (stopping) return null; // stopped while starting: stop() exits
        // e.g. a port in use, or a data dir that cannot be written
        throw new CliError(`svc dev could not start: ${error instanceof Error ? error.message : String(error)}`, EXIT.invalid);
      });
      if (!dev) return;
      void dev.failed.then((message) => stop(message, 1));
    });
}
