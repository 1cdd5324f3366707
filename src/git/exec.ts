// The one place that runs the git binary: isolated configuration, a scrubbed
// environment, a timeout that kills the whole process group, redacted errors.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { GitError, TimeoutError } from './errors.js';
import { redact } from './redact.js';
import { GIT_TERM_GRACE_MS, gitSpawnPool, type GitSpawnPool } from './spawn-pool.js';

export interface RunOptions {
  /** Repository (GIT_DIR) the command runs in. */
  gitDir?: string;
  /** Extra environment (credentials, identities, quarantine); never logged. */
  env?: Record<string, string>;
  input?: string | Buffer;
  timeoutMs: number;
  /** Values to scrub from any error text, besides URL userinfo. */
  secrets?: readonly string[];
  /** Exit codes that are answers, not failures (default: only 0). */
  okExitCodes?: readonly number[];
}

export interface RunResult {
  exitCode: number;
  stdout: Buffer;
  stderr: string;
}

// Inherited variables that only tune TLS; every other GIT_* (GIT_DIR, GIT_INDEX_FILE,
// tracing that would print Authorization headers, ...) is dropped.
const INHERITED_GIT_VARS = new Set(['GIT_SSL_CAINFO', 'GIT_SSL_CAPATH', 'GIT_SSL_NO_VERIFY', 'GIT_EXEC_PATH']);

function childEnv(extra: Record<string, string> | undefined, gitDir: string | undefined): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined) continue;
    if (key.startsWith('GIT_') && !INHERITED_GIT_VARS.has(key)) continue;
    // no ssh agent, askpass or credential of this process: a remote gets only what its project gives
    if (key === 'SSH_ASKPASS' || key === 'SSH_AUTH_SOCK' || key.startsWith('SVC_GIT_')) continue;
    env[key] = value;
  }
  Object.assign(env, {
    // The mirror must not depend on the machine's or the user's git configuration
    // (a global credential.helper=store would write the password to disk).
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    LC_ALL: 'C',
  });
  if (gitDir) env.GIT_DIR = gitDir;
  return Object.assign(env, extra);
}

/** The subcommand, for messages: the first argument that is not a `-c k=v` option. */
function commandName(args: readonly string[]): string {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '-c') { i++; continue; }
    if (!args[i]!.startsWith('-')) return args[i]!;
  }
  return 'git';
}

/** The git processes streamGit runs now (each leads its own process group). */
const running = new Set<ChildProcessWithoutNullStreams>();

/** Signals a git process and its helpers (remote-http, index-pack): it runs in its own process group. */
function signalGroup(child: ChildProcessWithoutNullStreams, signal: NodeJS.Signals): void {
  try { process.kill(-child.pid!, signal); } catch { child.kill(signal); }
}

/**
 * Ends every git this process runs through runGit and streamGit (not spawnGit's, whose callers
 * own them), for a process that stops and must not leave git working after it. SIGTERM, not
 * SIGKILL: git removes its lock files on SIGTERM, so the repository is not left locked (SIGKILL
 * after GIT_TERM_GRACE_MS for one that does not end). Their runs fail as killed. Resolves with how many, once
 * all have exited.
 */
export async function killRunningGit(): Promise<number> {
  const ending = [...running].map((child) => new Promise<void>((resolve) => {
    child.once('close', () => resolve());
    signalGroup(child, 'SIGTERM');
    setTimeout(() => signalGroup(child, 'SIGKILL'), GIT_TERM_GRACE_MS).unref();
  }));
  const [pooled] = await Promise.all([gitSpawnPool()?.killAll() ?? 0, ...ending]);
  return ending.length + pooled;
}

/**
 * Like runGit, but stdout goes to `onChunk` as it arrives (the reader is paused while a returned
 * promise is pending) and is never held here. `onChunk` returning 'stop' ends git early (killed;
 * not a failure). Resolves with the exit code and stderr.
 */
export function streamGit(args: readonly string[], options: RunOptions, onChunk: (chunk: Buffer) => void | 'stop' | Promise<void | 'stop'>): Promise<Omit<RunResult, 'stdout'>> {
  const name = commandName(args);
  const okExitCodes = options.okExitCodes ?? [0];
  return new Promise((resolve, reject) => {
    // Own process group, so a timeout also kills git's helpers (remote-http, index-pack).
    const child = spawn('git', args, { env: childEnv(options.env, options.gitDir), stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    const stderr: Buffer[] = [];
    let timedOut = false;
    let stopped = false;
    let failed: unknown;
    const kill = () => signalGroup(child, 'SIGKILL');
    const timer = setTimeout(() => { timedOut = true; kill(); }, options.timeoutMs);
    running.add(child);
    child.stdout.on('data', (chunk: Buffer) => {
      if (stopped) return;
      let answer;
      try { answer = onChunk(chunk); } catch (error) { failed = error; stopped = true; kill(); return; }
      const settle = (value: void | 'stop') => { if (value === 'stop') { stopped = true; kill(); } };
      if (answer instanceof Promise) {
        child.stdout.pause();
        answer.then((value) => { settle(value); child.stdout.resume(); }, (error: unknown) => { failed = error; stopped = true; kill(); });
      } else settle(answer);
    });
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.on('error', (error) => {
      clearTimeout(timer);
      running.delete(child);
      reject(new GitError(name, null, redact(error.message, options.secrets)));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      running.delete(child);
      const errText = redact(Buffer.concat(stderr).toString('utf8'), options.secrets);
      if (failed !== undefined) return reject(failed);
      if (timedOut) return reject(new TimeoutError(name, options.timeoutMs));
      if (stopped) return resolve({ exitCode: code ?? 0, stderr: errText });
      if (code === null || !okExitCodes.includes(code)) return reject(new GitError(name, code, errText));
      resolve({ exitCode: code, stderr: errText });
    });
    child.stdin.on('error', () => { /* git exited before reading its input */ });
    child.stdin.end(options.input ?? '');
  });
}

export async function runGit(args: readonly string[], options: RunOptions): Promise<RunResult> {
  const pool = gitSpawnPool();
  if (pool) return runPooled(pool, args, options);
  const stdout: Buffer[] = [];
  const result = await streamGit(args, options, (chunk) => { stdout.push(chunk); });
  return { ...result, stdout: Buffer.concat(stdout) };
}

/** runGit through the spawn pool: the same environment, timeout and error classification. */
async function runPooled(pool: GitSpawnPool, args: readonly string[], options: RunOptions): Promise<RunResult> {
  const name = commandName(args);
  const result = await pool.run({ args, env: childEnv(options.env, options.gitDir), input: options.input, timeoutMs: options.timeoutMs });
  if (result.error !== undefined) throw new GitError(name, null, redact(result.error, options.secrets));
  if (result.timedOut) throw new TimeoutError(name, options.timeoutMs);
  const errText = redact(result.stderr.toString('utf8'), options.secrets);
  if (result.code === null || !(options.okExitCodes ?? [0]).includes(result.code)) throw new GitError(name, result.code, errText);
  return { exitCode: result.code, stdout: result.stdout, stderr: errText };
}

export interface SpawnOptions {
  gitDir?: string;
  env?: Record<string, string>;
  /** The whole process group is killed after this long. */
  timeoutMs: number;
}

/**
 * A git process whose stdin and stdout the caller streams (the git gateway's upload-pack and
 * receive-pack), with runGit's scrubbed environment and process-group timeout.
 */
export function spawnGit(args: readonly string[], options: SpawnOptions): ChildProcessWithoutNullStreams {
  const child = spawn('git', args, { env: childEnv(options.env, options.gitDir), stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  const timer = setTimeout(() => signalGroup(child, 'SIGKILL'), options.timeoutMs);
  child.once('close', () => clearTimeout(timer));
  child.stdin.on('error', () => { /* git exited before reading all of its input: the exit code tells */ });
  return child;
}
