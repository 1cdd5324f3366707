// The `process` sandbox provider (the embedded default of `svc dev`): svc-agent as a detached
// child process of the operator, with its own folder under the data directory:
//   <dataDir>/<namespace>/<name>/state.json  pid, ports, the Sandbox uid (what a restarted operator reads)
//                               /workspace   the clone (discarded on every start, SPEC §1.2)
//                               /home        the engine home (kept across a restart after a crash,
//                                            fresh after a stop: a wake gets a new root session)
//                               /daemon.log  the daemon's output
// The daemon listens on a free port of 127.0.0.1 (SVC_DAEMON_PORT) and its engine on another;
// the agent still sees SVC_SERVICE_PORT=8000 and no SVC_WORKSPACE (SPEC §2.6). Secrets reach
// the child through its environment only: never argv, a file or a log. Detached, so that an
// operator killed with SIGKILL leaves its sandboxes running for the next operator to find.
import { spawn } from 'node:child_process';
import { openSync, closeSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { KeyedMutex } from '../../lib/keyed-mutex.js';
import { SANDBOX_STOP_GRACE_MS } from '../../lib/sandbox-stop.js';
import type { SandboxObservation, SandboxProvider, SandboxRef, SandboxRequest } from '../provider.js';

export interface ProcessProviderOptions {
  /** Root of every sandbox's folder. */
  dataDir: string;
  /** How to run svc-agent, e.g. [node, /path/dist/daemon/main.js]. */
  agentCommand: readonly string[];
  /** SVC_ENGINE_COMMAND of every sandbox (`{port}` replaced by the daemon); default: the daemon's (opencode). */
  engineCommand?: string;
  /** Non-secret daemon settings passed to every sandbox (e.g. SVC_ENGINE_MAX_RESTARTS). */
  daemonEnv?: Record<string, string>;
  /** Directories put first on the sandbox's PATH (e.g. one holding the `svc` CLI). */
  pathPrepend?: readonly string[];
  /** Loopback address the daemons listen on (default 127.0.0.1). */
  host?: string;
  /**
   * How long delete() waits after SIGTERM for svc-agent to exit (it checkpoints, then ends its
   * engine and the sandbox's processes) before SIGKILL (default SANDBOX_STOP_GRACE_MS, 35 s).
   */
  stopGraceMs?: number;
}

interface SandboxState {
  pid: number;
  port: number;
  enginePort: number;
  uid: string;
  startedAt: string;
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // a zombie waiting for its reaper runs nothing
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

function alive(pid: number): boolean {
  if (!running(pid)) return false;
  // A recycled pid belongs to another program: only our daemon counts.
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return /svc-agent|daemon[/\\]main\.js/.test(cmdline);
  } catch {
    return true; // no /proc (macOS): trust the signal probe
  }
}

/**
 * Processes left by a sandbox whose daemon died without stopping them (its engine runs in its
 * own process group): found by the sandbox's engine home in their environment (Linux /proc).
 */
function strays(home: string): number[] {
  const marker = `SVC_ENGINE_HOME=${home}\0`;
  const found: number[] = [];
  let entries: string[];
  try { entries = readdirSync('/proc'); } catch { return found; }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, 'latin1').includes(marker)) found.push(Number(entry));
    } catch { /* another user's process, or gone */ }
  }
  return found;
}

function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export class ProcessSandboxProvider implements SandboxProvider {
  readonly name = 'process' as const;
  private readonly locks = new KeyedMutex();
  private readonly host: string;
  /** Sandboxes this operator started or found, for stopAll(). */
  private readonly known = new Set<string>();

  constructor(private readonly options: ProcessProviderOptions) {
    this.host = options.host ?? '127.0.0.1';
  }

  private dir(ref: SandboxRef): string {
    return path.join(this.options.dataDir, ref.namespace, ref.name);
  }

  private async readState(ref: SandboxRef): Promise<SandboxState | null> {
    try {
      return JSON.parse(await readFile(path.join(this.dir(ref), 'state.json'), 'utf8')) as SandboxState;
    } catch {
      return null;
    }
  }

  private observeState(ref: SandboxRef, state: SandboxState | null): SandboxObservation {
    if (!state || state.uid !== ref.uid) return { state: 'absent' };
    if (alive(state.pid)) {
      this.known.add(this.dir(ref));
      return { state: 'running', address: `${this.host}:${state.port}`, detail: { pid: state.pid } };
    }
    return {
      state: 'absent',
      reason: 'Exited',
      message: `the sandbox process ${state.pid} exited; its output is in ${path.join(this.dir(ref), 'daemon.log')}`,
    };
  }

  async observe(ref: SandboxRef): Promise<SandboxObservation> {
    return this.observeState(ref, await this.readState(ref));
  }

  ensure(request: SandboxRequest): Promise<SandboxObservation> {
    return this.locks.run(this.dir(request), async () => {
      const previous = await this.readState(request);
      const seen = this.observeState(request, previous);
      if (seen.state !== 'absent') return seen;
      const dir = this.dir(request);
      // Same Sandbox, process died: keep the engine home (its root session and the record that
      // the initial prompt went out). Another Sandbox of that name: start from nothing.
      if (previous && previous.uid !== request.uid) await rm(dir, { recursive: true, force: true });
      const workspace = path.join(dir, 'workspace');
      const home = path.join(dir, 'home');
      for (const pid of strays(home)) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
      await rm(workspace, { recursive: true, force: true });
      await mkdir(workspace, { recursive: true, mode: 0o700 });
      await mkdir(home, { recursive: true, mode: 0o700 });
      const port = await freePort(this.host);
      let enginePort = await freePort(this.host);
      while (enginePort === port) enginePort = await freePort(this.host);
      const env: Record<string, string> = {
        PATH: [...(this.options.pathPrepend ?? []), process.env.PATH ?? '/usr/bin:/bin'].join(path.delimiter),
        HOME: home,
        ...(process.env.LANG ? { LANG: process.env.LANG } : {}),
        ...this.options.daemonEnv,
        ...request.env,
        ...request.secretEnv,
        SVC_WORKSPACE: workspace,
        SVC_ENGINE_HOME: home,
        SVC_SERVICE_HOST: this.host,
        SVC_DAEMON_PORT: String(port),
        SVC_ENGINE_PORT: String(enginePort),
        ...(this.options.engineCommand ? { SVC_ENGINE_COMMAND: this.options.engineCommand } : {}),
      };
      const log = openSync(path.join(dir, 'daemon.log'), 'a', 0o600);
      const [command, ...args] = this.options.agentCommand;
      const child = spawn(command!, args, { cwd: dir, env, detached: true, stdio: ['ignore', log, log] });
      closeSync(log);
      const pid = await new Promise<number>((resolve, reject) => {
        child.once('spawn', () => resolve(child.pid!));
        child.once('error', reject);
      });
      child.unref();
      const state: SandboxState = { pid, port, enginePort, uid: request.uid, startedAt: new Date().toISOString() };
      const file = path.join(dir, 'state.json');
      await writeFile(`${file}.tmp`, JSON.stringify(state), { mode: 0o600 });
      await rename(`${file}.tmp`, file);
      this.known.add(dir);
      return { state: 'provisioning', address: `${this.host}:${port}`, detail: { pid } };
    });
  }

  /**
   * Stops the sandbox and removes its folder; resolves only when nothing of it runs (the daemon,
   * its engine, what the agent's tools started), else rejects naming what is left.
   */
  delete(ref: SandboxRef): Promise<void> {
    const dir = this.dir(ref);
    return this.locks.run(dir, async () => {
      const state = await this.readState(ref);
      if (state) await this.kill(state.pid);
      await this.endStrays(path.join(dir, 'home'));
      await rm(dir, { recursive: true, force: true });
      this.known.delete(dir);
    });
  }

  /** SIGKILL to what a sandbox left (found by its engine home), waiting until it is gone. */
  private async endStrays(home: string): Promise<void> {
    const deadline = Date.now() + 5_000;
    for (;;) {
      const left = strays(home).filter(running);
      if (left.length === 0) return;
      if (Date.now() > deadline) throw new Error(`processes of the sandbox still run after SIGKILL: ${left.join(', ')}`);
      for (const pid of left) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Stops every sandbox process this operator started or found, keeping their folders (a clean operator stop). */
  async stopAll(): Promise<void> {
    await Promise.all([...this.known].map(async (dir) => {
      try {
        const state = JSON.parse(await readFile(path.join(dir, 'state.json'), 'utf8')) as SandboxState;
        await this.kill(state.pid);
      } catch { /* gone already */ }
    }));
  }

  /**
   * SIGTERM to the daemon (it checkpoints, then ends its engine and the sandbox's processes; its
   * own git children keep running for the checkpoint), SIGKILL to its process group after the
   * grace period; resolves when the daemon is gone.
   */
  private async kill(pid: number): Promise<void> {
    if (!alive(pid)) return;
    try { process.kill(pid, 'SIGTERM'); } catch { /* gone */ }
    const deadline = Date.now() + (this.options.stopGraceMs ?? SANDBOX_STOP_GRACE_MS);
    while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    if (!alive(pid)) return;
    try { process.kill(-pid, 'SIGKILL'); } catch { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
    const killed = Date.now() + 5_000;
    while (alive(pid) && Date.now() < killed) await new Promise((r) => setTimeout(r, 20));
    if (alive(pid)) throw new Error(`the sandbox process ${pid} still runs after SIGKILL`);
  }
}
