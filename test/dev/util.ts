// Shared by the svc dev acceptance tests: run real binaries, poll for a state, make git repos.
import { execFile, execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';

export interface Ran { code: number; stdout: string; stderr: string }

export function run(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env, input?: string): Promise<Ran> {
  return new Promise((resolve) => {
    const child = execFile(cmd, args, { env, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
    if (input !== undefined) child.stdin!.end(input);
  });
}

/** Runs and fails with the output when the exit code is not 0. */
export async function runOk(cmd: string, args: string[], env?: NodeJS.ProcessEnv, input?: string): Promise<string> {
  const result = await run(cmd, args, env, input);
  if (result.code !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${result.code}:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

/** Polls `check` until it returns a value other than undefined/false (what `kubectl wait` does). */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export const GIT_ENV = { ...process.env, GIT_AUTHOR_NAME: 'dev', GIT_AUTHOR_EMAIL: 'dev@example.com', GIT_COMMITTER_NAME: 'dev', GIT_COMMITTER_EMAIL: 'dev@example.com' };

/** A repository (working tree) with `files` committed on main. */
export function makeRepo(dir: string, files: Record<string, string>): void {
  execFileSync('git', ['init', '-q', '-b', 'main', dir]);
  commitFiles(dir, files, 'initial commit');
}

export function commitFiles(dir: string, files: Record<string, string>, message: string): string {
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  execFileSync('git', ['add', '-A'], { cwd: dir });
  execFileSync('git', ['commit', '-q', '-m', message], { cwd: dir, env: GIT_ENV });
  return execFileSync('git', ['rev-parse', 'HEAD'], { cwd: dir, encoding: 'utf8' }).trim();
}

/** svc.yaml with two valid triggers and one invalid (uppercase slug, no schedule), plus `extra` entries. */
export function manifestWithTriggers(extra = ''): string {
  return `svc_version: 2
default_agent: coder
agents:
  coder: {}
triggers:
  - slug: nightly
    type: cron
    cron: "0 0 3 * * *"
    prompt: Review yesterday's changes
  - slug: on-push
    type: webhook
    secret_env: HOOK_SECRET
    prompt: "A push to {{ref}}"
  - slug: Broken
    type: cron
    prompt: no schedule and an uppercase slug
${extra}`;
}
