// A session's lifecycle around stop, failure and deletion, through `svc dev` (the process
// provider, jailed sandboxes, the fixture engine): a stopped session's Sandbox and folder go
// within a minute while the Session stays the record (DESIGN §8.4); a failed session keeps its
// Sandbox and its sandbox's log, bounded and redacted, for `svc sessions logs --daemon`; a deleted
// session's checkpoint ref and branch leave the project's repository, except a branch an open
// change request uses, also when the whole Project is deleted (issue 22, issue 24 §1), with kubectl
// or with `svc projects delete` (DELETE /v1/projects/:id).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newToken, tokenSecret } from '../../src/lib/api-tokens.js';
import { DAEMON_LOG_TAIL_BYTES } from '../../src/resources/index.js';
import { buildArtifacts } from '../daemon/harness.js';
import { callApi, fixtureEngineArgs, REPO_ROOT, startDev, stopDevAndSandboxes, type DevInstance } from '../helpers/dev.js';
import { makeRepo, run, runOk, waitFor } from '../dev/util.js';

let dev: DevInstance;
const projects: Record<string, { id: string; repo: string }> = {};
const GIT_ENV = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };
/** A project secret the failing engine prints: the kept log must not show it. */
const CANARY = 'canary-value-7f3a91';

interface SessionView { id: string; status: string; reason: string | null; sandbox_state: string | null; branch: string | null }

const api = <T = Record<string, unknown>>(method: string, urlPath: string, body?: unknown, token: string | null = dev.token) => callApi<T>(dev, method, urlPath, body, token);

const kubectl = (...args: string[]) => runOk('kubectl', args, dev.env);
const exists = async (kind: string, name: string) => (await run('kubectl', ['get', kind, name, '-o', 'name'], dev.env)).code === 0;
const sessionsPath = (project: string) => `/projects/${projects[project]!.id}/sessions`;
const sandboxDir = (id: string) => path.join(dev.dataDir, 'sandboxes', 'default', id);
/** The refs of the project's repository on its host, by full name. */
const hostRefs = (project: string) => execFileSync('git', ['for-each-ref', '--format=%(refname)'], { cwd: projects[project]!.repo, encoding: 'utf8' }).split('\n').filter(Boolean);

async function createProject(name: string, manifest = 'svc_version: 2\ndefault_agent: coder\nagents:\n  coder: {}\n'): Promise<void> {
  const repo = path.join(dev.dataDir, `repo-${name}`);
  makeRepo(repo, { 'svc.yaml': manifest });
  await runOk('kubectl', ['apply', '-f', '-'], dev.env, JSON.stringify({ apiVersion: 'svc.dev/v1alpha1', kind: 'Project', metadata: { name }, spec: { repoUrl: repo, defaultBranch: 'main' } }));
  const id = await waitFor(`project ${name}`, async () => (await kubectl('get', 'project', name, '-o', 'jsonpath={.metadata.uid}')) || undefined);
  projects[name] = { id, repo };
}

async function startSession(project: string): Promise<string> {
  const res = await api<{ session: SessionView }>('POST', sessionsPath(project), {});
  expect(res.status).toBe(201);
  return res.body.session.id;
}

async function waitStatus(project: string, id: string, status: string, timeoutMs = 45_000): Promise<SessionView> {
  return waitFor(`session ${id} ${status}`, async () => {
    const { body } = await api<{ session: SessionView }>('GET', `${sessionsPath(project)}/${id}`);
    return body.session?.status === status ? body.session : undefined;
  }, timeoutMs);
}

/** A running session whose branch has a commit of its own and a checkpoint ref, as a session that worked has. */
async function workedSession(project: string): Promise<string> {
  const id = await startSession(project);
  await waitStatus(project, id, 'running');
  const { repo } = projects[project]!;
  const tree = execFileSync('git', ['rev-parse', `${id}^{tree}`], { cwd: repo, encoding: 'utf8' }).trim();
  const commit = execFileSync('git', ['commit-tree', tree, '-p', id, '-m', `work of ${id}`], { cwd: repo, encoding: 'utf8', env: GIT_ENV }).trim();
  execFileSync('git', ['update-ref', `refs/heads/${id}`, commit], { cwd: repo });
  execFileSync('git', ['update-ref', `refs/svc/checkpoints/${id}`, commit], { cwd: repo });
  return id;
}

async function openChangeRequest(project: string, head: string): Promise<void> {
  const opened = await api('POST', `/projects/${projects[project]!.id}/change-requests`, { title: `From ${head}`, head_ref: head });
  expect(opened.status, opened.text).toBe(201);
}

async function mint(grant: { access: 'read' | 'write'; capabilities: string[] }): Promise<string> {
  const token = newToken();
  await runOk('kubectl', ['apply', '-f', '-'], dev.env, JSON.stringify(tokenSecret(token, { userId: randomUUID(), ...grant }, 'default')));
  return token;
}

beforeAll(async () => {
  const { fixtureEngine } = await buildArtifacts();
  // An engine that refuses to start when its project has the secret FAIL_ENGINE, after writing
  // 200 KB of stderr per attempt (more than the kept log holds) and the secret's value.
  const engine = fixtureEngineArgs(fixtureEngine, (command) => {
    const script = `if [ -n "$FAIL_ENGINE" ]; then yes "filler line the engine writes" | head -n 7000 >&2; echo "engine refuses to start: $FAIL_ENGINE" >&2; exit 3; fi; exec ${command} --port "$1"`;
    return `/bin/sh -c '${script.replaceAll("'", "'\\''")}' engine {port}`;
  });
  dev = await startDev({ args: [...engine, '--max-sessions', '20', '--idle-timeout', '30m'], extraEnv: { SVC_ENGINE_MAX_RESTARTS: '1', SVC_ENGINE_RESTART_BACKOFF_MS: '100' } });
  await createProject('demo');
}, 120_000);

afterAll(() => stopDevAndSandboxes(dev));

describe('a session around stop, failure and deletion', () => {
  it('the prompts waiting on a session are bounded: past 192 KiB in all a prompt is 429, saying why, and nothing is queued', async () => {
    // an engine that takes 20 s to listen: the session stays provisioning and takes no prompt
    await createProject('slow');
    await kubectl('create', 'secret', 'generic', 'slow-secrets', '--from-literal=FIXTURE_ENGINE_LISTEN_DELAY_MS=20000');
    const id = await startSession('slow');
    const prompt = (n: number) => api<{ session: { status: string; pending_prompts: number }; error?: string }>('POST', `${sessionsPath('slow')}/${id}/prompt`, { text: `${n}`.repeat(60_000) });
    for (const n of [1, 2, 3]) {
      const queued = await prompt(n);
      expect(queued.status, queued.text).toBe(202);
      expect(queued.body.session).toMatchObject({ status: 'provisioning', pending_prompts: n });
    }
    const refused = await prompt(4);
    expect(refused.status).toBe(429);
    expect(refused.body.error).toBe(`session ${id} already has 3 prompt(s) waiting, 196608 bytes at most in all: it takes them once it runs; send this one after`);
    const { body } = await api<{ session: { pending_prompts: number } }>('GET', `${sessionsPath('slow')}/${id}`);
    expect(body.session.pending_prompts).toBe(3);
    expect((await api('POST', `${sessionsPath('slow')}/${id}/stop`)).status).toBe(200);
  }, 60_000);

  it("a stopped session's Sandbox and folder are gone within a minute; the Session stays with the same answer; a wake makes a new Sandbox", async () => {
    const id = await startSession('demo');
    await waitStatus('demo', id, 'running');
    const firstUid = await kubectl('get', 'sandbox', id, '-o', 'jsonpath={.metadata.uid}');
    expect(existsSync(sandboxDir(id))).toBe(true);

    expect((await api('POST', `${sessionsPath('demo')}/${id}/stop`)).status).toBe(200);
    const stopped = await waitStatus('demo', id, 'stopped');
    expect(stopped).toMatchObject({ reason: 'Stopped', sandbox_state: 'stopped', branch: id });
    await waitFor('the Sandbox and its folder gone', async () => !(await exists('sandbox', id)) && !existsSync(sandboxDir(id)), 60_000);
    // the Session is the record: same REST answer, Ready says stopped
    expect((await api<{ session: SessionView }>('GET', `${sessionsPath('demo')}/${id}`)).body.session).toEqual(stopped);
    expect(await kubectl('get', 'session', id, '-o', 'jsonpath={.status.conditions[?(@.type=="SandboxReady")].reason}')).toBe('Stopped');

    expect((await api('POST', `${sessionsPath('demo')}/${id}/prompt`, { text: 'go on' })).status).toBe(202);
    await waitStatus('demo', id, 'running');
    const secondUid = await kubectl('get', 'sandbox', id, '-o', 'jsonpath={.metadata.uid}');
    expect(secondUid).not.toBe(firstUid);
    expect((await api('POST', `${sessionsPath('demo')}/${id}/stop`)).status).toBe(200);
    await waitStatus('demo', id, 'stopped');
  }, 150_000);

  it("a failed session keeps its Sandbox and its sandbox's log (bounded, secrets masked): GET .../daemon-log and svc sessions logs --daemon", async () => {
    await createProject('broken');
    expect((await api('PUT', `/projects/${projects.broken!.id}/secrets/FAIL_ENGINE`, { value: CANARY })).status).toBe(204);
    const id = await startSession('broken');
    const failed = await waitStatus('broken', id, 'failed');
    expect(failed.reason).toBe('EngineFailed');
    const logPath = `${sessionsPath('broken')}/${id}/daemon-log`;
    const kept = await waitFor('the kept log', async () => {
      const res = await api('GET', logPath);
      return res.status === 200 ? res : undefined;
    });
    expect(kept.type).toContain('text/plain');
    expect(Buffer.byteLength(kept.text)).toBeLessThanOrEqual(DAEMON_LOG_TAIL_BYTES);
    expect(Buffer.byteLength(kept.text)).toBeGreaterThan(DAEMON_LOG_TAIL_BYTES - 4096); // the end of a longer log
    expect(kept.text).toContain('filler line the engine writes');
    expect(kept.text).toContain('engine refuses to start: ***');
    expect(kept.text).not.toContain(CANARY);
    // its Sandbox stays (the record of the failure); its folder and process go
    expect(await kubectl('get', 'sandbox', id, '-o', 'jsonpath={.status.state}')).toBe('error');
    await waitFor('the failed sandbox folder gone', async () => !existsSync(sandboxDir(id)));

    const cli = await runOk(process.execPath, [path.join(REPO_ROOT, 'bin/svc.js'), 'sessions', 'logs', id, '--daemon', '--project', projects.broken!.id], dev.env);
    expect(cli).toBe(kept.text);

    // read access and project.session.read; none for a session that did not fail
    expect((await api('GET', logPath, undefined, await mint({ access: 'read', capabilities: [] }))).status).toBe(403);
    expect((await api('GET', logPath, undefined, await mint({ access: 'read', capabilities: ['project.session.read'] }))).status).toBe(200);
    expect((await api('GET', logPath, undefined, '')).status).toBe(401);
    const live = await startSession('demo');
    const none = await api<{ error: string }>('GET', `${sessionsPath('demo')}/${live}/daemon-log`);
    expect(none.status).toBe(404);
    expect(none.body.error).toContain('failed');
    expect((await api('GET', `${sessionsPath('broken')}/${randomUUID()}/daemon-log`)).status).toBe(404);
    const noLog = await run(process.execPath, [path.join(REPO_ROOT, 'bin/svc.js'), 'sessions', 'logs', live, '--daemon', '--project', projects.demo!.id], dev.env);
    expect(noLog.code).not.toBe(0);
    expect(noLog.stderr).toContain('no sandbox log is kept');

    // kept until the session is deleted
    await kubectl('delete', 'session', id);
    await waitFor('the kept log gone with its session', async () => !(await exists('secret', `svc-session-log-${id}`)));
    await kubectl('delete', 'session', live);
  }, 150_000);

  it("a deleted session's checkpoint ref and branch leave the repository; a branch an open change request uses stays", async () => {
    const done = await workedSession('demo');
    const reviewed = await workedSession('demo');
    await openChangeRequest('demo', reviewed);
    for (const id of [done, reviewed]) expect(hostRefs('demo')).toEqual(expect.arrayContaining([`refs/heads/${id}`, `refs/svc/checkpoints/${id}`]));

    await kubectl('delete', 'session', done, reviewed);
    expect(await exists('session', done)).toBe(false);
    expect(await exists('session', reviewed)).toBe(false);
    const refs = hostRefs('demo');
    expect(refs).not.toContain(`refs/heads/${done}`);
    expect(refs).not.toContain(`refs/svc/checkpoints/${done}`);
    expect(refs).not.toContain(`refs/svc/checkpoints/${reviewed}`);
    expect(refs).toContain(`refs/heads/${reviewed}`);
    expect(refs).toContain('refs/heads/main');
  }, 150_000);

  it("a deleted Project's sessions' refs are cleaned by the same rule before the Project goes", async () => {
    await createProject('doomed');
    const done = await workedSession('doomed');
    const reviewed = await workedSession('doomed');
    await openChangeRequest('doomed', reviewed);

    await kubectl('delete', 'project', 'doomed', '--timeout=90s');
    expect(await exists('project', 'doomed')).toBe(false);
    await waitFor('its sessions gone', async () => !(await exists('session', done)) && !(await exists('session', reviewed)));
    const refs = hostRefs('doomed');
    expect(refs).not.toContain(`refs/heads/${done}`);
    expect(refs.filter((r) => r.startsWith('refs/svc/'))).toEqual([]);
    expect(refs).toContain(`refs/heads/${reviewed}`);
  }, 150_000);

  it('svc projects delete: refused without --yes (nothing changes), then the same deletion through DELETE /v1/projects/:id; a second one finds no project', async () => {
    await createProject('retired');
    const running = await startSession('retired');
    await waitStatus('retired', running, 'running');
    const reviewed = await workedSession('retired');
    await openChangeRequest('retired', reviewed);
    const svc = (...args: string[]) => run(process.execPath, [path.join(REPO_ROOT, 'bin/svc.js'), ...args], dev.env);

    const refused = await svc('projects', 'delete', 'retired');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('svc: deleting project retired stops and deletes its sessions and deletes its triggers, fires and change requests (the repository stays); run again with --yes to delete it');
    expect(await exists('project', 'retired')).toBe(true);
    expect((await waitStatus('retired', running, 'running')).status).toBe('running');

    const deleted = await svc('projects', 'rm', 'retired', '--yes');
    expect(deleted.stderr).toBe('');
    expect(deleted.code).toBe(0);
    expect(deleted.stdout).toContain(`Deleting project retired (${projects.retired!.id})`);
    // the API no longer shows it at once; the cluster lets it go once its sessions cleaned their refs
    expect((await api('GET', `/projects/${projects.retired!.id}`)).status).toBe(404);
    await waitFor('the project, its sessions and sandboxes gone', async () =>
      !(await exists('project', 'retired')) && !(await exists('session', running)) && !(await exists('session', reviewed)) && !(await exists('sandbox', running)), 90_000);
    expect(existsSync(sandboxDir(running))).toBe(false);
    const refs = hostRefs('retired');
    expect(refs).not.toContain(`refs/heads/${running}`);
    expect(refs).toContain(`refs/heads/${reviewed}`);

    const again = await svc('projects', 'delete', 'retired', '--yes');
    expect(again.code).toBe(1);
    expect(again.stderr).toBe('svc: no project named retired\n');
  }, 150_000);
});
