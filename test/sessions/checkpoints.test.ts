// Issue 22 through `svc dev` (the built CLI, the git gateway, the fixture engine): uncommitted
// work and the conversation across stop and wake, a branch that moved meanwhile, a sandbox and
// a whole svc dev killed with SIGKILL, a project with checkpoints off, and a wedged engine. What
// the user sees: files in the new sandbox, the checkpoint ref on the host repository, the
// engine's conversation through the API, and the daemon's health (which the Session controller
// turns into status and Events).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { buildArtifacts } from '../daemon/harness.js';
import { REPO_ROOT, removeDevDir, startDev, type DevInstance } from '../helpers/dev.js';
import { makeRepo, runOk, waitFor } from '../dev/util.js';
import { isRunning } from '../../src/lib/proc.js';

let dev: DevInstance;
let repo: string;
let devArgs: string[];
const extraEnv = {
  SVC_ENGINE_RESTART_BACKOFF_MS: '50',
  // the watchdog, quick (only this file's wedged engines are quiet that long)
  SVC_ENGINE_PROGRESS_TIMEOUT_MS: '3000',
  SVC_ENGINE_HEALTH_INTERVAL_MS: '500',
  SVC_ENGINE_HEALTH_TIMEOUT_MS: '1000',
  SVC_ENGINE_HEALTH_FAILURES: '2',
};
const projects: Record<string, string> = {};

interface SessionView { id: string; status: string; reason: string | null; checkpoint: { sha: string; at: string } | null }
interface Health {
  status: string;
  engine: { state: string; restarts: number; root_session_id: string | null; initial_prompt_sent_at: string | null };
  checkpoint: {
    enabled: boolean; sha: string | null; at: string | null; writes: number;
    restored: { sha: string; at: string } | null; skipped: { sha: string | null; reason: string } | null;
    conversation: { restored: { session_id: string; messages: number } | null; error: string | null };
  };
  progress: { state: string; stalls: number; last_stall: { reason: string } | null };
}

async function api<T = Record<string, unknown>>(method: string, urlPath: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${dev.apiUrl}${urlPath}`, {
    method,
    headers: { authorization: `Bearer ${dev.token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as T };
}

const kubectl = (...args: string[]) => runOk('kubectl', args, dev.env);
/** The Session's Events of `reason`: message and count each (kubectl, as a user reads them). */
async function eventsOf(id: string, reason: string): Promise<{ type: string; message: string; count: number }[]> {
  const list = JSON.parse(await kubectl('get', 'events', '--field-selector', `involvedObject.name=${id},reason=${reason}`, '-o', 'json')) as { items: { type: string; message: string; count?: number }[] };
  return list.items.map((e) => ({ type: e.type, message: e.message, count: e.count ?? 1 }));
}
const condition = async (id: string, type: string) =>
  JSON.parse(await kubectl('get', 'session', id, '-o', `jsonpath={.status.conditions[?(@.type=="${type}")]}`) || '{}') as { status?: string; reason?: string; message?: string };
const session = async (project: string, id: string) => (await api<{ session: SessionView }>('GET', `${sessionsPath(project)}/${id}`)).body.session;
const sessionsPath = (project: string) => `/projects/${projects[project]}/sessions`;
const directive = (d: Record<string, unknown>) => `#fixture ${JSON.stringify(d)}`;
const sandboxDir = (id: string) => path.join(dev.dataDir, 'sandboxes', 'default', id);
const sandboxState = (id: string) => JSON.parse(readFileSync(path.join(sandboxDir(id), 'state.json'), 'utf8')) as { pid: number; address: string };
const hostGit = (...args: string[]) => execFileSync('git', args, { cwd: repo, encoding: 'utf8' }).trim();
const hostRef = (id: string) => { try { return hostGit('rev-parse', '--verify', '-q', `refs/svc/checkpoints/${id}`); } catch { return null; } };
const workspaceStatus = (id: string) => execFileSync('git', ['-c', 'safe.directory=*', 'status', '--porcelain'], { cwd: path.join(sandboxDir(id), 'workspace'), encoding: 'utf8' }).trimEnd();
const workspaceFile = (id: string, file: string) => {
  const p = path.join(sandboxDir(id), 'workspace', file);
  return existsSync(p) ? readFileSync(p, 'utf8') : null;
};

/** The daemon's GET /svc/health of the session's current sandbox. */
async function health(id: string): Promise<Health | undefined> {
  try {
    const res = await fetch(`http://${sandboxState(id).address}/svc/health`, { signal: AbortSignal.timeout(3000) });
    return res.ok ? await res.json() as Health : undefined;
  } catch { return undefined; }
}
async function healthWhen(id: string, what: string, check: (h: Health) => boolean, timeoutMs = 60_000): Promise<Health> {
  let last: Health | undefined;
  try {
    return await waitFor(what, async () => { last = await health(id); return last && check(last) ? last : undefined; }, timeoutMs);
  } catch (error) {
    const log = path.join(sandboxDir(id), 'daemon.log');
    throw new Error(`${(error as Error).message}\nlast health: ${JSON.stringify(last)}\n--- daemon.log ---\n${existsSync(log) ? readFileSync(log, 'utf8').slice(-4000) : '(none)'}\n--- svc dev ---\n${dev.output().slice(-4000)}`);
  }
}

async function startSession(project: string, prompt: string): Promise<string> {
  const res = await api<{ session: SessionView }>('POST', sessionsPath(project), { prompt });
  expect(res.status).toBe(201);
  return res.body.session.id;
}

async function waitStatus(project: string, id: string, status: string, timeoutMs = 60_000): Promise<void> {
  await waitFor(`session ${id} ${status}`, async () => (await api<{ session: SessionView }>('GET', `${sessionsPath(project)}/${id}`)).body.session.status === status || undefined, timeoutMs);
}

/** Stops the session and waits until its sandbox is gone; then a prompt wakes it in a new sandbox. */
async function stopAndWake(project: string, id: string, prompt: string, whileStopped?: () => Promise<void>): Promise<void> {
  const pid = sandboxState(id).pid;
  expect((await api('POST', `${sessionsPath(project)}/${id}/stop`)).status).toBe(200);
  await waitStatus(project, id, 'stopped');
  await waitFor('the sandbox folder gone', async () => !existsSync(sandboxDir(id)) || undefined);
  expect(isRunning(pid)).toBe(false);
  await whileStopped?.();
  expect((await api('POST', `${sessionsPath(project)}/${id}/prompt`, { text: prompt })).status).toBe(202);
  await waitStatus(project, id, 'running');
}

/** Processes whose environment carries `NAME=value`. */
function processesWith(entry: string): number[] {
  return readdirSync('/proc').filter((e) => /^\d+$/.test(e)).filter((pid) => {
    try { return readFileSync(`/proc/${pid}/environ`, 'latin1').includes(`${entry}\0`); } catch { return false; }
  }).map(Number);
}

async function createProject(name: string, spec: Record<string, unknown> = {}): Promise<void> {
  const project = { apiVersion: 'svc.dev/v1alpha1', kind: 'Project', metadata: { name }, spec: { repoUrl: repo, defaultBranch: 'main', ...spec } };
  await runOk('kubectl', ['apply', '-f', '-'], dev.env, JSON.stringify(project));
  projects[name] = await waitFor(`project ${name}`, async () => (await kubectl('get', 'project', name, '-o', 'jsonpath={.metadata.uid}')) || undefined);
}

beforeAll(async () => {
  const { fixtureEngine } = await buildArtifacts();
  // `serve` in the command: the daemon imports a saved conversation with `... import <file>`, as with opencode
  // a restarted engine (after a stall or a crash) listens 6 s later: longer than the Session
  // controller's 5 s look at a running session, so that it sees the stall (Progressing=False)
  devArgs = ['--engine-command', `env FIXTURE_ENGINE_RESTART_LISTEN_DELAY_MS=6000 '${process.execPath}' '${fixtureEngine}' serve --port {port}`, '--sandbox-mount', path.dirname(fixtureEngine), '--max-sessions', '20', '--idle-timeout', '30m'];
  // a short data dir: the daemon's credential socket lies below it, and a unix socket path has
  // at most 107 bytes (a sandbox restarted under svc dev's default temp dir trips over that today)
  dev = await startDev({ dataDir: mkdtempSync('/tmp/ck'), extraEnv, args: devArgs });
  repo = path.join(dev.dataDir, 'repo');
  makeRepo(repo, { 'README.md': '# demo\n', 'keep.txt': 'v1\n', 'gone.txt': 'bye\n', '.gitignore': '*.log\n' });
  await createProject('demo');
  await createProject('forgetful', { checkpoints: false });
}, 90_000);

afterAll(async () => {
  await dev?.stop();
  if (!dev) return;
  const root = path.join(dev.dataDir, 'sandboxes', 'default');
  for (const id of existsSync(root) ? readdirSync(root) : []) {
    try { process.kill(-sandboxState(id).pid, 'SIGKILL'); } catch { /* gone */ }
    for (const pid of processesWith(`HOME=${path.join(root, id, 'home')}`)) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
  }
  if (!process.env.KEEP_DEV_DIR) removeDevDir(dev.dataDir);
});

describe('checkpoints through svc dev', () => {
  it('stop and wake: modified, new and deleted files come back uncommitted, ignored ones do not; the agent continues its conversation', async () => {
    const id = await startSession('demo', directive({ write: { 'keep.txt': 'v2\n', 'notes/new.txt': 'new\n', 'trace.log': 'ignored\n' }, delete: ['gone.txt'], end: true }));
    await waitStatus('demo', id, 'running');
    const before = await healthWhen(id, 'the turn checkpointed', (h) => h.checkpoint.writes >= 1);
    const tip = hostGit('rev-parse', `refs/heads/${id}`);
    expect(hostRef(id)).toBe(before.checkpoint.sha); // on the host, through the git gateway
    expect(hostGit('rev-parse', `${before.checkpoint.sha}^1`)).toBe(tip);
    const root = before.engine.root_session_id!;

    await stopAndWake('demo', id, directive({ end: true }), async () => {
      // stopped: the session still shows its checkpoint (REST, the CLI), the sandbox is gone
      const stopped = await session('demo', id);
      expect(stopped.checkpoint).toEqual({ sha: before.checkpoint.sha, at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/) });
      expect(Date.parse(stopped.checkpoint!.at)).toBe(Date.parse(before.checkpoint.at!));
      const shown = await runOk(process.execPath, [path.join(REPO_ROOT, 'bin/svc.js'), 'sessions', 'show', id, '--project', 'demo'], dev.env);
      expect(shown).toContain(`Checkpoint: ${before.checkpoint.sha!.slice(0, 12)} at ${stopped.checkpoint!.at}`);
    });
    const after = await healthWhen(id, 'the new sandbox ready', (h) => h.status === 'ok' && h.engine.root_session_id !== null);
    expect(after.checkpoint.restored?.sha).toBe(before.checkpoint.sha);
    // the Session says so, once for this sandbox boot
    const restoredEvents = await waitFor('the CheckpointRestored Event', async () => { const e = await eventsOf(id, 'CheckpointRestored'); return e.length ? e : undefined; });
    expect(restoredEvents).toEqual([{ type: 'Normal', message: expect.stringContaining(`restored checkpoint ${before.checkpoint.sha!.slice(0, 12)}`), count: 1 }]);
    expect(workspaceFile(id, 'keep.txt')).toBe('v2\n');
    expect(workspaceFile(id, 'notes/new.txt')).toBe('new\n');
    expect(workspaceFile(id, 'gone.txt')).toBeNull();
    expect(workspaceFile(id, 'trace.log')).toBeNull();
    expect(workspaceStatus(id)).toBe([' D gone.txt', ' M keep.txt', '?? notes/'].join('\n'));
    expect(hostGit('rev-parse', `refs/heads/${id}`)).toBe(tip); // nothing was committed for the agent
    // the same root session, holding the turn before the stop, receives the wake's prompt
    expect(after.engine.root_session_id).toBe(root);
    const messages = await waitFor('the wake prompt delivered', async () => {
      const r = await api<Array<{ info: { role: string }; parts: Array<{ text?: string }> }>>('GET', `${sessionsPath('demo')}/${id}/engine/session/${root}/message`);
      return r.status === 200 && r.body.length >= 4 ? r.body : undefined;
    });
    expect(messages.map((m) => m.parts[0]?.text)).toEqual([
      expect.stringContaining('notes/new.txt'), expect.stringContaining('fixture did'),
      directive({ end: true }), expect.stringContaining('fixture did'),
    ]);
  }, 180_000);

  it('a stop in the middle of a turn, a program of the agent running in the background: the stop\'s checkpoint saves the work, and the stopped session shows it', async () => {
    // a file written by a turn still running (a tool reported running: no stall), so no turn-end
    // checkpoint; and a background program (setsid, as a dev server) that the sandbox's PID
    // namespace adopts: the stop's SIGTERM once went to it instead of svc-agent, which then saved
    // nothing and was killed after the whole grace
    const marker = `900.${process.pid}${Date.now() % 100000}`;
    const id = await startSession('demo', directive({ write: { 'mid-turn.txt': 'unsaved\n' }, spawn: `sleep ${marker}`, toolRunning: true }));
    await waitStatus('demo', id, 'running');
    await healthWhen(id, 'the prompt sent (the file written)', (h) => h.engine.initial_prompt_sent_at !== null);
    const background = () => readdirSync('/proc').filter((e) => /^\d+$/.test(e) && isRunning(Number(e))).filter((pid) => { try { return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker); } catch { return false; } });
    await waitFor('the background program', async () => background().length > 0 || undefined, 10_000);
    expect((await session('demo', id)).checkpoint).toBeNull();
    expect((await api('POST', `${sessionsPath('demo')}/${id}/stop`)).status).toBe(200);
    await waitStatus('demo', id, 'stopped');
    const sha = hostRef(id);
    expect(sha).not.toBeNull();
    expect(hostGit('show', `${sha}:mid-turn.txt`)).toBe('unsaved');
    expect(background()).toEqual([]);
    // pushed after the last look at the daemon's health: the git gateway tells the Session
    const shown = await waitFor('the stopped session shows the stop\'s checkpoint', async () => { const s = await session('demo', id); return s.checkpoint?.sha === sha ? s : undefined; });
    expect(Date.parse(shown.checkpoint!.at)).toBeGreaterThan(0);
  }, 90_000);

  it('the branch moved while the session slept: the checkpoint is skipped and the health says why', async () => {
    const id = await startSession('demo', directive({ write: { 'draft.txt': 'wip\n' }, end: true }));
    await waitStatus('demo', id, 'running');
    const sha = (await healthWhen(id, 'the turn checkpointed', (h) => h.checkpoint.writes >= 1)).checkpoint.sha;
    const pid = sandboxState(id).pid;
    expect((await api('POST', `${sessionsPath('demo')}/${id}/stop`)).status).toBe(200);
    await waitStatus('demo', id, 'stopped');
    await waitFor('the sandbox gone', async () => !isRunning(pid) || undefined);
    // a person pushes to the session branch meanwhile
    const tip = hostGit('rev-parse', `refs/heads/${id}`);
    const moved = hostGit('commit-tree', `${tip}^{tree}`, '-p', tip, '-m', 'moved meanwhile');
    hostGit('update-ref', `refs/heads/${id}`, moved, tip);
    expect((await api('POST', `${sessionsPath('demo')}/${id}/prompt`, { text: directive({ end: true }) })).status).toBe(202);
    await waitStatus('demo', id, 'running');
    const h = await healthWhen(id, 'the new sandbox ready', (x) => x.status === 'ok');
    expect(h.checkpoint.restored).toBeNull();
    expect(h.checkpoint.skipped).toMatchObject({ sha, reason: expect.stringMatching(/branch moved since the checkpoint/) });
    const skipped = await waitFor('the CheckpointSkipped Event', async () => { const e = await eventsOf(id, 'CheckpointSkipped'); return e.length ? e : undefined; });
    expect(skipped).toEqual([{ type: 'Warning', message: `left checkpoint ${sha!.slice(0, 12)} alone: ${h.checkpoint.skipped!.reason}`, count: 1 }]);
    expect(await eventsOf(id, 'CheckpointRestored')).toEqual([]);
    expect(workspaceFile(id, 'draft.txt')).toBeNull();
    expect(h.checkpoint.conversation.restored).not.toBeNull();
  }, 180_000);

  it('a sandbox killed with SIGKILL is started again with the last checkpoint restored', async () => {
    const id = await startSession('demo', directive({ write: { 'survivor.txt': 'still here\n' }, end: true }));
    await waitStatus('demo', id, 'running');
    const sha = (await healthWhen(id, 'the turn checkpointed', (h) => h.checkpoint.writes >= 1)).checkpoint.sha;
    const { pid } = sandboxState(id);
    const home = path.join(sandboxDir(id), 'home');
    for (const p of [pid, ...processesWith(`HOME=${home}`)]) { try { process.kill(p, 'SIGKILL'); } catch { /* gone */ } }
    await waitFor('a new sandbox process', async () => (existsSync(path.join(sandboxDir(id), 'state.json')) && sandboxState(id).pid !== pid) || undefined, 60_000);
    const h = await healthWhen(id, 'the restarted sandbox ready', (x) => x.status === 'ok');
    expect(h.checkpoint.restored?.sha).toBe(sha);
    expect(workspaceFile(id, 'survivor.txt')).toBe('still here\n');
    // the restarted sandbox is a boot of its own: its restore is an Event
    const restored = await waitFor('the CheckpointRestored Event', async () => { const e = await eventsOf(id, 'CheckpointRestored'); return e.length ? e : undefined; });
    expect(restored).toEqual([{ type: 'Normal', message: expect.stringContaining(`restored checkpoint ${sha!.slice(0, 12)}`), count: 1 }]);
  }, 120_000);

  it('spec.checkpoints: false: nothing saved, nothing restored', async () => {
    const id = await startSession('forgetful', directive({ write: { 'lost.txt': 'x\n' }, end: true }));
    await waitStatus('forgetful', id, 'running');
    const h = await healthWhen(id, 'ready', (x) => x.status === 'ok');
    expect(h.checkpoint.enabled).toBe(false);
    const env = await api<Record<string, string>>('GET', `/projects/${projects.forgetful}/sessions/${id}/engine/fixture/env`);
    expect(env.body.SVC_CHECKPOINTS).toBe('0');
    await stopAndWake('forgetful', id, directive({ end: true }));
    const after = await healthWhen(id, 'the new sandbox ready', (x) => x.status === 'ok');
    expect(after.checkpoint).toMatchObject({ enabled: false, sha: null, restored: null, writes: 0 });
    expect(workspaceFile(id, 'lost.txt')).toBeNull();
    expect(hostRef(id)).toBeNull();
  }, 180_000);

  it('a wedged engine (a turn that never ends; a health check that hangs) is aborted, restarted and reported', async () => {
    const id = await startSession('demo', directive({ silent: true }));
    await waitStatus('demo', id, 'running');
    // while the engine is stuck and restarting: Progressing=False with the daemon's reason
    const stalled = await waitFor('Progressing=False', async () => { const c = await condition(id, 'Progressing'); return c.status === 'False' ? c : undefined; }, 60_000);
    expect(stalled).toMatchObject({ reason: 'EngineStalled', message: expect.stringMatching(/showed no engine event/) });
    const first = await healthWhen(id, 'the silent turn found stalled and recovered', (h) => h.progress.stalls >= 1 && h.progress.state === 'ok' && h.engine.state === 'ready');
    expect(first.progress.last_stall?.reason).toMatch(/showed no engine event/);
    expect(first.engine.restarts).toBe(1);
    const root = first.engine.root_session_id!;
    expect((await api('POST', `${sessionsPath('demo')}/${id}/prompt`, { text: directive({ hangHealth: true }) })).status).toBe(202);
    const second = await healthWhen(id, 'the hanging health found stalled and recovered', (h) => h.progress.stalls >= 2 && h.progress.state === 'ok' && h.engine.state === 'ready');
    expect(second.progress.last_stall?.reason).toMatch(/health check did not answer/);
    expect(second.engine.root_session_id).toBe(root);
    expect((await api<{ session: SessionView }>('GET', `${sessionsPath('demo')}/${id}`)).body.session.status).toBe('running');
    // recovered: Progressing=True; one Warning per stall, each written once (level-based, not per look)
    await waitFor('Progressing=True', async () => (await condition(id, 'Progressing')).status === 'True' || undefined);
    const stalls = await waitFor('two EngineStalled Events', async () => { const e = await eventsOf(id, 'EngineStalled'); return e.length === 2 ? e : undefined; });
    expect(stalls.map((e) => [e.type, e.count])).toEqual([['Warning', 1], ['Warning', 1]]);
    expect(stalls.map((e) => e.message)).toEqual(expect.arrayContaining([
      expect.stringMatching(/^the engine was stuck \(.*showed no engine event.*\); svc-agent aborted its turn and restarted it \(stall 1 of this sandbox\)$/),
      expect.stringMatching(/^the engine was stuck \(.*health check did not answer.*\); svc-agent aborted its turn and restarted it \(stall 2 of this sandbox\)$/),
    ]));
  }, 180_000);

  it('svc dev killed with SIGKILL, sandboxes and all: started again, the sandbox has its last checkpoint', async () => {
    const id = await startSession('demo', directive({ write: { 'crash.txt': 'before the crash\n' }, end: true }));
    await waitStatus('demo', id, 'running');
    const sha = (await healthWhen(id, 'the turn checkpointed', (h) => h.checkpoint.writes >= 1)).checkpoint.sha;
    const { pid } = sandboxState(id);
    const everything = [
      dev.process.pid!,
      ...processesWith(`SVC_SANDBOX_DIR=${path.join(dev.dataDir, 'sandboxes')}`), // the operator
      ...processesWith(`SVC_MIRROR_DIR=${path.join(dev.dataDir, 'api-mirrors')}`), // the API
      pid,
      ...readdirSync(path.join(dev.dataDir, 'sandboxes', 'default')).flatMap((s) => processesWith(`HOME=${path.join(dev.dataDir, 'sandboxes', 'default', s, 'home')}`)),
    ];
    for (const p of everything) { try { process.kill(p, 'SIGKILL'); } catch { /* gone */ } }
    await waitFor('everything gone', async () => everything.every((p) => !isRunning(p)) || undefined);
    // on the same API port: a sandbox started again keeps the API URL in its Sandbox's env
    // (svc dev with --api-port 0 otherwise gives it a dead one: docs/sessions.md)
    const apiPort = new URL(dev.apiUrl).port;
    dev = await startDev({ dataDir: dev.dataDir, extraEnv, args: [...devArgs, '--api-port', apiPort] });
    // the killed operator's Lease runs out first (15 s)
    await waitFor('the sandbox started again', async () => (existsSync(path.join(sandboxDir(id), 'state.json')) && sandboxState(id).pid !== pid && isRunning(sandboxState(id).pid)) || undefined, 90_000);
    const h = await healthWhen(id, 'the sandbox ready', (x) => x.status === 'ok', 60_000);
    expect(h.checkpoint.restored?.sha).toBe(sha);
    expect(workspaceFile(id, 'crash.txt')).toBe('before the crash\n');
  }, 240_000);
});
