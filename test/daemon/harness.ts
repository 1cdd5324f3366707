// Shared pieces of the daemon integration tests: the built daemon as a process, the fixture
// engine, signed headers, free ports and scratch git repositories.
import { spawn, execFile, execFileSync, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, mkdtempSync, rmSync, statSync, readdirSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { signContextHeader, type ContextScope } from '../../src/lib/context-header.js';
import { warmEnvironment } from '../../src/lib/warm-sandbox.js';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const TOKEN = 'sandbox-token-for-tests-0123456789';
export const SESSION_ID = '3f1c8f2e-6f3a-4f7e-9a55-0c1d2e3f4a5b';
export const PROJECT_ID = '9b2d4c6e-1a3b-4c5d-8e9f-0a1b2c3d4e5f';

let built: Promise<{ daemon: string; fixtureEngine: string }> | null = null;

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs);
  }
  return newest;
}

/**
 * The daemon entry to run: `bin/svc-agent.js` when dist/ is at least as new as the daemon's
 * sources (as under `make test`), else an esbuild bundle of the same sources. Plus the fixture engine.
 */
export function buildArtifacts(): Promise<{ daemon: string; fixtureEngine: string }> {
  built ??= (async () => {
    const out = path.join(REPO_ROOT, 'node_modules', '.cache', 'svc-agent-test', String(process.pid));
    const dist = path.join(REPO_ROOT, 'dist', 'daemon', 'main.js');
    const sources = Math.max(newestMtime(path.join(REPO_ROOT, 'daemon')), newestMtime(path.join(REPO_ROOT, 'src', 'lib')));
    const distFresh = existsSync(dist) && existsSync(path.join(REPO_ROOT, 'dist', 'daemon', 'credential-helper.js'))
      && newestMtime(path.join(REPO_ROOT, 'dist', 'daemon')) >= sources;
    await build({
      entryPoints: distFresh
        ? { 'fixture-engine': path.join(REPO_ROOT, 'test/fixtures/engine/main.ts') }
        : {
          main: path.join(REPO_ROOT, 'daemon/main.ts'),
          'credential-helper': path.join(REPO_ROOT, 'daemon/credential-helper.ts'),
          'fixture-engine': path.join(REPO_ROOT, 'test/fixtures/engine/main.ts'),
        },
      outdir: out,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      logLevel: 'error',
    });
    return {
      daemon: distFresh ? path.join(REPO_ROOT, 'bin', 'svc-agent.js') : path.join(out, 'main.js'),
      fixtureEngine: path.join(out, 'fixture-engine.js'),
    };
  })();
  return built;
}

export function cleanupArtifacts(): void {
  rmSync(path.join(REPO_ROOT, 'node_modules', '.cache', 'svc-agent-test', String(process.pid)), { recursive: true, force: true });
}

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export function tempDir(prefix: string): string {
  return mkdtempSync(path.join(os.tmpdir(), `svc-${prefix}-`));
}

export function sign(scope: ContextScope = '*', overrides: { sid?: string; ttlSeconds?: number; now?: number; key?: string } = {}): string {
  return signContextHeader(overrides.key ?? TOKEN, {
    sub: 'user-1',
    sid: overrides.sid ?? SESSION_ID,
    scope,
    ttlSeconds: overrides.ttlSeconds,
    now: overrides.now,
  });
}

export function signed(scope: ContextScope = '*', init: RequestInit = {}): RequestInit {
  return { ...init, headers: { ...(init.headers as Record<string, string> | undefined), 'x-svc-user-context': sign(scope) } };
}

export interface Health {
  status: string;
  daemon: {
    state: string; error: string | null; pid: number; started_at: string;
    retry: { step: string; attempt: number; cause: string; error: string; next_attempt_at: string } | null;
    failed_step: string | null;
  };
  engine: {
    state: string; restarts: number; last_exit: { code: number | null; signal: string | null; at: string } | null; last_error: string | null;
    next_restart_at: string | null;
    root_session_id: string | null; initial_prompt_sent_at: string | null; initial_prompt_pending: boolean; root_session_error: string | null; turn_error?: string | null;
    run: { type?: string } | null;
  };
  repository: { url: string | null; branch: string | null; commit: string | null };
  runtime_env_names: string[];
  last_activity_at: string | null;
  boot: Record<'listening_at' | 'clone_started_at' | 'clone_ended_at' | 'restore_started_at' | 'restore_ended_at' | 'engine_started_at' | 'engine_ready_at', string | null>;
}

export interface DaemonProcess {
  url: string;
  port: number;
  process: ChildProcess;
  output(): string;
  health(): Promise<Health>;
  /** polls health until `check` holds (or throws with the last health and the daemon's output) */
  waitFor(check: (h: Health) => boolean, what: string, timeoutMs?: number): Promise<Health>;
  stop(): Promise<void>;
}

export interface DaemonDirs { workspace: string; home: string }

/**
 * Starts the daemon with the fixture engine unless `env.SVC_ENGINE_COMMAND` says otherwise;
 * `warm`: as a warm sandbox starts it, loaded first, then given its settings on stdin.
 */
export async function startDaemon(dirs: DaemonDirs, env: Record<string, string> = {}, options: { warm?: boolean } = {}): Promise<DaemonProcess> {
  const { daemon, fixtureEngine } = await buildArtifacts();
  const enginePort = env.SVC_ENGINE_PORT ?? String(await freePort());
  // its own port chosen here too: bound as port 0, the kernel once handed it the engine's port, just freed
  let servicePort = await freePort();
  while (String(servicePort) === enginePort) servicePort = await freePort();
  const settings: Record<string, string> = {
    PATH: process.env.PATH!,
    SVC_PROJECT_ID: PROJECT_ID,
    SVC_SESSION_ID: SESSION_ID,
    SVC_SANDBOX_TOKEN: TOKEN,
    SVC_SERVICE_HOST: '127.0.0.1',
    SVC_SERVICE_PORT: String(servicePort),
    SVC_WORKSPACE: dirs.workspace,
    SVC_ENGINE_HOME: dirs.home,
    SVC_ENGINE_PORT: enginePort,
    SVC_ENGINE_COMMAND: `'${process.execPath}' '${fixtureEngine}' --port {port}`,
    SVC_ENGINE_RESTART_BACKOFF_MS: '50',
    SVC_ENGINE_BOOT_TIMEOUT_MS: '20000',
    ...env,
  };
  const child = spawn(process.execPath, [daemon], {
    cwd: REPO_ROOT,
    env: options.warm ? warmEnvironment({ PATH: settings.PATH! }) : settings,
    stdio: [options.warm ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
  if (options.warm) setTimeout(() => child.stdin!.end(JSON.stringify(settings)), 200); // once loaded
  let output = '';
  child.stderr!.on('data', (d: Buffer) => { output += d.toString(); });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      output += d.toString();
      const m = /svc-agent listening on http:\/\/[^:]+:(\d+)/.exec(output);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`svc-agent exited (${code}) before listening:\n${output}`)));
  });
  const url = `http://127.0.0.1:${port}`;
  const health = async () => (await (await fetch(`${url}/svc/health`)).json()) as Health;
  return {
    url,
    port,
    process: child,
    output: () => output,
    health,
    async waitFor(check, what, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      let last: Health | undefined;
      while (Date.now() < deadline) {
        last = await health();
        if (check(last)) return last;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`timed out waiting for ${what}; last health: ${JSON.stringify(last)}\n--- daemon output ---\n${output}`);
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

const GIT_TEST_ENV = { GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t', GIT_TERMINAL_PROMPT: '0' };

/** Runs git, returns trimmed stdout. Blocks the event loop: not for servers living in this process. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, ...GIT_TEST_ENV }, stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** git without blocking, for commands that reach a server in this process. `env` replaces the identity. */
export async function gitAsync(cwd: string, args: string[], env: Record<string, string | undefined> = { ...process.env, ...GIT_TEST_ENV }): Promise<string> {
  const { stdout } = await promisify(execFile)('git', args, { cwd, env, encoding: 'utf8' });
  return stdout.trim();
}

/** A bare repository `<dir>/<name>.git` with one commit on `main` (optionally a manifest). */
export function makeUpstream(dir: string, name = 'project', files: Record<string, string> = { 'README.md': 'hello\n' }): { bare: string; seed: string } {
  const bare = path.join(dir, `${name}.git`);
  const seed = path.join(dir, `${name}-seed`);
  git(dir, 'init', '--quiet', '--bare', '--initial-branch=main', bare);
  git(dir, 'init', '--quiet', '--initial-branch=main', seed);
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(seed, file)), { recursive: true });
    writeFileSync(path.join(seed, file), content);
  }
  git(seed, 'add', '-A');
  git(seed, 'commit', '--quiet', '-m', 'initial');
  git(seed, 'remote', 'add', 'origin', bare);
  git(seed, 'push', '--quiet', 'origin', 'main');
  return { bare, seed };
}

/** Commits a file in `clone` and pushes it to `branch`. Returns the new commit. */
export function commitAndPush(clone: string, branch: string, file: string, content: string): string {
  writeFileSync(path.join(clone, file), content);
  git(clone, 'add', file);
  git(clone, 'commit', '--quiet', '-m', `change ${file}`);
  git(clone, 'push', '--quiet', 'origin', `HEAD:refs/heads/${branch}`);
  return git(clone, 'rev-parse', 'HEAD');
}

export function readCalls(home: string): Array<{ method: string; path: string; body?: { parts?: Array<{ text: string }>; agent?: string } }> {
  const file = path.join(home, 'fixture-calls.jsonl');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

/** The texts of the user messages in the fixture engine's store in `home` (every session, in order); none before it wrote one. */
export function readUserPrompts(home: string): string[] {
  let store: Record<string, { messages: { info: { role: string }; parts: { text?: string }[] }[] }>;
  try { store = JSON.parse(readFileSync(path.join(home, 'fixture-sessions.json'), 'utf8')); } catch { return []; }
  return Object.values(store).flatMap((s) => s.messages).filter((m) => m.info.role === 'user').map((m) => m.parts[0]?.text ?? '');
}

/** Scratch folders and daemons of one test file, removed and stopped together. */
export class DaemonPool {
  readonly dirs: string[] = [];
  readonly running: DaemonProcess[] = [];

  /** a fresh workspace and engine home, plus any named extra folders */
  scratch<K extends string>(...extra: K[]): DaemonDirs & Record<K, string> {
    const d = { workspace: tempDir('ws'), home: tempDir('home'), ...Object.fromEntries(extra.map((k) => [k, tempDir(k)])) } as DaemonDirs & Record<K, string>;
    this.dirs.push(...(Object.values(d) as string[]));
    return d;
  }

  async start(...args: Parameters<typeof startDaemon>): Promise<DaemonProcess> {
    const d = await startDaemon(...args);
    this.running.push(d);
    return d;
  }

  async stopAll(): Promise<void> {
    await Promise.all(this.running.splice(0).map((d) => d.stop()));
  }

  async cleanup(): Promise<void> {
    await this.stopAll();
    for (const d of this.dirs) rmSync(d, { recursive: true, force: true });
    cleanupArtifacts();
  }
}
