// svc-agent checkpoints, the conversation across sandboxes, the stop and the progress watchdog
// (issue 22; DESIGN §8.3), with the built daemon, the fixture engine and a bare repository as
// the project's host: what a new sandbox of the session finds in its working tree, in git and
// in its engine, and what health reports.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { isRunning } from '../../src/lib/proc.js';
import {
  DaemonPool, SESSION_ID, TOKEN, buildArtifacts, git, makeUpstream, readCalls, signed, tempDir, type DaemonDirs, type DaemonProcess,
} from './harness.js';

const pool = new DaemonPool();
afterEach(() => pool.stopAll());
afterAll(() => pool.cleanup());

const REF = `refs/svc/checkpoints/${SESSION_ID}`;

interface CheckpointHealth {
  enabled: boolean; ref: string; sha: string | null; at: string | null; writes: number;
  restored: { sha: string; at: string } | null;
  skipped: { sha: string | null; reason: string } | null;
  conversation: { restored: { sha: string; session_id: string; messages: number } | null; error: string | null };
  last_error: { message: string } | null;
}
interface ProgressHealth { state: string; reason: string | null; stalls: number; busy: boolean; last_stall: { reason: string } | null }
type Full = Awaited<ReturnType<DaemonProcess['health']>> & { checkpoint: CheckpointHealth; progress: ProgressHealth };

const full = async (d: DaemonProcess) => (await d.health()) as Full;

async function engineCommand(): Promise<string> {
  const { fixtureEngine } = await buildArtifacts();
  // `serve` in the command: the daemon derives the import form (`... import {file}`) from it, as for opencode
  return `'${process.execPath}' '${fixtureEngine}' serve --port {port}`;
}

/** A daemon of the session on a fresh workspace and engine home (a new sandbox), cloning `bare`. */
async function sandbox(bare: string, env: Record<string, string> = {}): Promise<{ d: DaemonProcess; dirs: DaemonDirs }> {
  const dirs = pool.scratch();
  const d = await pool.start(dirs, {
    SVC_PROJECT_AUTO_CLONE: '1',
    SVC_REPO_URL: bare,
    SVC_BASE_REF: 'main',
    SVC_BOOTSTRAP_ENGINE_SESSION: '1',
    SVC_ENGINE_COMMAND: await engineCommand(),
    ...env,
  });
  await d.waitFor((h) => h.status === 'ok' && h.engine.root_session_id !== null, 'the engine ready with its root session');
  return { d, dirs };
}

async function prompt(d: DaemonProcess, text: string): Promise<void> {
  const root = (await d.health()).engine.root_session_id!;
  const res = await fetch(`${d.url}/session/${root}/prompt_async`, signed('engine', {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ parts: [{ type: 'text', text }] }),
  }));
  expect(res.status).toBe(204);
}

async function waitForPid(pattern: string): Promise<number> {
  for (let i = 0; i < 100; i++) {
    try { return Number(execFileSync('pgrep', ['-f', pattern], { encoding: 'utf8' }).trim().split('\n')[0]); } catch { await new Promise((r) => setTimeout(r, 100)); }
  }
  throw new Error(`no process ${pattern}`);
}

const directive = (d: Record<string, unknown>) => `#fixture ${JSON.stringify(d)}`;
const hostRef = (bare: string) => {
  try { return git(bare, 'rev-parse', '--verify', '-q', REF); } catch { return null; }
};
/** `git status --porcelain` as printed (the harness's git() trims the leading blank of ' D'). */
const status = (cwd: string) => execFileSync('git', ['status', '--porcelain'], { cwd, encoding: 'utf8' }).trimEnd();

describe('checkpoints across stop and a new sandbox', () => {
  it('modified, new and deleted files come back as uncommitted changes, ignored ones do not; HEAD, the branch and the index stay; the conversation continues', async () => {
    const up = tempDir('up');
    const { bare } = makeUpstream(up, 'project', { 'README.md': 'hello\n', 'keep.txt': 'v1\n', 'gone.txt': 'bye\n', '.gitignore': '*.log\nbuild/\n', 'run.sh': '#!/bin/sh\n' });
    const first = await sandbox(bare, { SVC_INITIAL_PROMPT: 'start the work' });
    const tip = git(bare, 'rev-parse', `refs/heads/${SESSION_ID}`);
    await prompt(first.d, directive({
      write: { 'keep.txt': 'v2\n', 'new/deep.txt': 'fresh\n', 'debug.log': 'ignored\n', 'build/out.bin': 'ignored too\n' },
      delete: ['gone.txt'],
      end: true,
    }));
    const written = await first.d.waitFor((h) => ((h as Full).checkpoint?.writes ?? 0) >= 1, 'a checkpoint after the turn') as Full;
    const sha = written.checkpoint.sha!;
    expect(hostRef(bare)).toBe(sha);
    expect(git(bare, 'rev-parse', `${sha}^1`)).toBe(tip);
    expect(git(bare, 'ls-tree', '-r', '--name-only', sha).split('\n').sort()).toEqual(['.gitignore', 'README.md', 'keep.txt', 'new/deep.txt', 'run.sh']);
    // the agent's index, HEAD and branch are as they were: nothing staged, nothing committed
    const ws = first.dirs.workspace;
    expect(git(ws, 'rev-parse', 'HEAD')).toBe(tip);
    expect(git(ws, 'diff', '--cached', '--name-only')).toBe('');
    expect(status(ws)).toBe([' D gone.txt', ' M keep.txt', '?? new/'].join('\n'));
    expect(git(bare, 'rev-parse', `refs/heads/${SESSION_ID}`)).toBe(tip);
    const root = written.engine.root_session_id;
    await first.d.stop();

    const second = await sandbox(bare, { SVC_INITIAL_PROMPT: 'start the work' });
    const h = await full(second.d);
    expect(h.checkpoint.restored).toEqual({ sha, at: written.checkpoint.at });
    expect(h.checkpoint.skipped).toBeNull();
    const ws2 = second.dirs.workspace;
    expect(readFileSync(path.join(ws2, 'keep.txt'), 'utf8'), `${first.d.output()}\n---second---\n${second.d.output()}\n${JSON.stringify(h.checkpoint)}`).toBe('v2\n');
    expect(readFileSync(path.join(ws2, 'new/deep.txt'), 'utf8')).toBe('fresh\n');
    expect(existsSync(path.join(ws2, 'gone.txt'))).toBe(false);
    expect(existsSync(path.join(ws2, 'debug.log'))).toBe(false);
    expect(existsSync(path.join(ws2, 'build'))).toBe(false);
    expect(status(ws2)).toBe([' D gone.txt', ' M keep.txt', '?? new/'].join('\n'));
    expect(git(ws2, 'rev-parse', 'HEAD')).toBe(tip);
    expect(git(ws2, 'diff', '--cached', '--name-only')).toBe('');
    // the conversation: the same root session, its messages imported before the engine started
    expect(h.engine.root_session_id).toBe(root);
    expect(h.checkpoint.conversation.restored).toMatchObject({ session_id: root, messages: 3 });
    const calls = readCalls(second.dirs.home);
    expect(calls[0]).toMatchObject({ method: 'IMPORT', path: root });
    expect(calls.filter((c) => c.method === 'POST' && c.path === '/session')).toHaveLength(0);
    const messages = await (await fetch(`${second.d.url}/session/${root}/message`, signed('engine'))).json() as Array<{ parts: Array<{ text?: string }> }>;
    expect(messages.map((m) => m.parts[0]?.text)).toEqual(['start the work', expect.stringContaining('#fixture'), expect.stringContaining('fixture did')]);
    // the initial prompt is never sent twice
    expect(calls.filter((c) => c.path.endsWith('/prompt_async'))).toHaveLength(0);
    // nothing changed since: no new checkpoint on the stop
    await second.d.stop();
    expect(hostRef(bare)).toBe(sha);
  }, 90_000);

  it('the branch moved since the checkpoint: the checkpoint is left alone, reported, and kept reachable from the next one', async () => {
    const up = tempDir('up');
    const { bare, seed } = makeUpstream(up);
    const first = await sandbox(bare);
    await prompt(first.d, directive({ write: { 'wip.txt': 'unfinished\n' }, end: true }));
    const sha = (await first.d.waitFor((h) => ((h as Full).checkpoint?.writes ?? 0) >= 1, 'a checkpoint') as Full).checkpoint.sha!;
    await first.d.stop();
    // someone pushes to the session branch meanwhile
    git(seed, 'fetch', '-q', 'origin');
    git(seed, 'checkout', '-q', '-B', 'side', `origin/${SESSION_ID}`);
    writeFileSync(path.join(seed, 'other.txt'), 'x\n');
    git(seed, 'add', '-A');
    git(seed, 'commit', '-q', '-m', 'moved');
    git(seed, 'push', '-q', 'origin', `HEAD:refs/heads/${SESSION_ID}`);

    const second = await sandbox(bare);
    const h = await full(second.d);
    expect(h.checkpoint.restored).toBeNull();
    expect(h.checkpoint.skipped?.sha).toBe(sha);
    expect(h.checkpoint.skipped?.reason).toMatch(/the branch moved since the checkpoint/);
    expect(existsSync(path.join(second.dirs.workspace, 'wip.txt'))).toBe(false);
    expect(hostRef(bare)).toBe(sha); // left alone
    // the conversation still comes back (it does not depend on the branch)
    expect(h.checkpoint.conversation.restored).not.toBeNull();
    await prompt(second.d, directive({ write: { 'later.txt': 'l\n' }, end: true }));
    const next = (await second.d.waitFor((x) => ((x as Full).checkpoint?.writes ?? 0) >= 1, 'the next checkpoint') as Full).checkpoint.sha!;
    expect(git(bare, 'log', '-1', '--format=%B', next)).toContain(`svc-preserves: ${sha}`);
    expect(git(bare, 'merge-base', '--is-ancestor', sha, next)).toBe('');
  }, 90_000);

  it('no secret of the sandbox leaves it in the saved conversation', async () => {
    const up = tempDir('up');
    const { bare } = makeUpstream(up);
    const secret = 'sekrit-value-8d1e';
    const { d } = await sandbox(bare, { SVC_PROJECT_SECRET_NAMES: 'API_KEY', API_KEY: secret, SVC_CLI_TOKEN: 'svc_cli_token_value_1234' });
    await prompt(d, directive({ write: { 'note.txt': 'n\n' }, end: true, echo: `${secret} ${TOKEN} svc_cli_token_value_1234` }));
    const sha = (await d.waitFor((h) => ((h as Full).checkpoint?.writes ?? 0) >= 1, 'a checkpoint') as Full).checkpoint.sha!;
    const conversation = git(bare, 'log', '-1', '--format=%(trailers:key=svc-conversation,valueonly)', sha);
    const saved = git(bare, 'ls-tree', '--name-only', conversation).split('\n').map((f) => git(bare, 'show', `${conversation}:${f}`)).join('\n');
    expect(saved).toContain('[secret removed by svc]');
    for (const value of [secret, TOKEN, 'svc_cli_token_value_1234']) expect(saved).not.toContain(value);
  }, 60_000);

  it('SVC_CHECKPOINTS=0: nothing is written, nothing restored', async () => {
    const up = tempDir('up');
    const { bare } = makeUpstream(up);
    const first = await sandbox(bare);
    await prompt(first.d, directive({ write: { 'a.txt': 'a\n' }, end: true }));
    const sha = (await first.d.waitFor((h) => ((h as Full).checkpoint?.writes ?? 0) >= 1, 'a checkpoint') as Full).checkpoint.sha!;
    await first.d.stop();
    const off = await sandbox(bare, { SVC_CHECKPOINTS: '0' });
    let h = await full(off.d);
    expect(h.checkpoint).toMatchObject({ enabled: false, sha: null, restored: null, skipped: null });
    expect(existsSync(path.join(off.dirs.workspace, 'a.txt'))).toBe(false);
    expect(readCalls(off.dirs.home).some((c) => c.method === 'IMPORT')).toBe(false);
    await prompt(off.d, directive({ write: { 'b.txt': 'b\n' }, end: true }));
    await new Promise((r) => setTimeout(r, 1500));
    await off.d.stop();
    h = await full(off.d).catch(() => h);
    expect(hostRef(bare)).toBe(sha);
  }, 90_000);
});

describe('when checkpoints are written', () => {
  it('during a turn, at most once per interval and only while the tree changes', async () => {
    const up = tempDir('up');
    const { bare } = makeUpstream(up);
    const { d } = await sandbox(bare, { SVC_CHECKPOINT_INTERVAL_MS: '500' });
    await prompt(d, directive({ write: { 'draft.txt': 'one\n' } })); // a turn that does not end
    const interval = await d.waitFor((h) => ((h as Full).checkpoint?.writes ?? 0) >= 1, 'an interval checkpoint') as Full;
    expect(git(bare, 'log', '-1', '--format=%s', interval.checkpoint.sha!)).toMatch(/\(interval\)$/);
    expect(git(bare, 'show', `${interval.checkpoint.sha}:draft.txt`)).toBe('one');
    // nothing changes: no more checkpoints
    await new Promise((r) => setTimeout(r, 2000));
    expect((await full(d)).checkpoint.writes).toBe(1);
  }, 60_000);

  it('on SIGTERM, within the grace; the stop ends the engine and what it started in a session of its own', async () => {
    const up = tempDir('up');
    const { bare } = makeUpstream(up);
    const marker = `600.${process.pid}${Date.now() % 100000}`; // a sleep nobody else runs
    const { d } = await sandbox(bare, { SVC_STOP_GRACE_MS: '2000' });
    // a turn that does not end, with a server started by setsid
    await prompt(d, directive({ write: { 'draft.txt': 'two\n' }, spawn: `sleep ${marker}` }));
    const stray = await waitForPid(`sleep ${marker}`);
    const engine = Number(((await (await fetch(`${d.url}/global/health`, signed('engine'))).json()) as { pid: number }).pid);
    expect((await full(d)).checkpoint.writes).toBe(0);
    await d.stop();
    expect(d.output()).toContain('checkpoint on stop: written');
    const last = hostRef(bare)!;
    expect(git(bare, 'log', '-1', '--format=%s', last)).toMatch(/\(stop\)$/);
    expect(git(bare, 'show', `${last}:draft.txt`)).toBe('two');
    expect(isRunning(engine)).toBe(false);
    expect(isRunning(stray)).toBe(false);
  }, 60_000);
});

describe('a stuck engine', () => {
  it('whose health check hangs is restarted; health reports the stall; the conversation stays', async () => {
    const up = tempDir('up');
    const { bare } = makeUpstream(up);
    const { d } = await sandbox(bare, { SVC_ENGINE_HEALTH_INTERVAL_MS: '200', SVC_ENGINE_HEALTH_TIMEOUT_MS: '300', SVC_ENGINE_HEALTH_FAILURES: '2' });
    const root = (await d.health()).engine.root_session_id;
    await prompt(d, directive({ hangHealth: true }));
    const h = await d.waitFor((x) => (x as Full).progress?.stalls === 1 && (x as Full).progress.state === 'ok' && x.engine.state === 'ready', 'the stall recovered', 30_000) as Full;
    expect(h.progress.last_stall?.reason).toMatch(/health check did not answer within 300 ms, 2 times in a row/);
    expect(h.progress.state).toBe('ok');
    expect(h.engine.restarts).toBe(1);
    expect(h.engine.root_session_id).toBe(root);
  }, 60_000);

  it('whose turn shows no event for the progress timeout is aborted and restarted; a tool reported running is progress', async () => {
    const up = tempDir('up');
    const { bare } = makeUpstream(up);
    const env = { SVC_ENGINE_HEALTH_INTERVAL_MS: '200', SVC_ENGINE_PROGRESS_TIMEOUT_MS: '1000' };
    const tool = await sandbox(bare, env);
    await prompt(tool.d, directive({ toolRunning: true }));
    await new Promise((r) => setTimeout(r, 3000));
    expect((await full(tool.d)).progress).toMatchObject({ stalls: 0, busy: true, state: 'ok' });
    await tool.d.stop();

    const { d, dirs } = await sandbox(bare, env);
    const root = (await d.health()).engine.root_session_id!;
    await prompt(d, directive({ silent: true }));
    const h = await d.waitFor((x) => (x as Full).progress?.stalls === 1 && (x as Full).progress.state === 'ok' && x.engine.state === 'ready', 'the stall recovered', 30_000) as Full;
    expect(h.progress.last_stall?.reason).toMatch(/the turn showed no engine event for \d+ s/);
    expect(readCalls(dirs.home).some((c) => c.method === 'POST' && c.path === `/session/${root}/abort`)).toBe(true);
    expect(h.engine.restarts).toBe(1);
    expect(h.engine.root_session_id).toBe(root);
  }, 60_000);

  it('that keeps getting stuck ends failed with the reason', async () => {
    const up = tempDir('up');
    const { bare } = makeUpstream(up);
    const dirs = pool.scratch();
    const d = await pool.start(dirs, {
      SVC_PROJECT_AUTO_CLONE: '1', SVC_REPO_URL: bare, SVC_BASE_REF: 'main', SVC_ENGINE_COMMAND: await engineCommand(),
      FIXTURE_HANG_HEALTH_AFTER_MS: '300', SVC_ENGINE_HEALTH_INTERVAL_MS: '200', SVC_ENGINE_HEALTH_TIMEOUT_MS: '200', SVC_ENGINE_HEALTH_FAILURES: '2',
      SVC_ENGINE_MAX_RESTARTS: '1',
    });
    const h = await d.waitFor((x) => x.engine.state === 'failed', 'the engine given up', 40_000) as Full;
    expect(h.status).toBe('failed');
    expect(h.engine.last_error).toMatch(/giving up; the last: the engine's health check did not answer/);
    expect(h.progress.stalls).toBe(2);
  }, 60_000);
});

