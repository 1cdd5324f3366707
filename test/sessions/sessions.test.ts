// Sessions through `svc dev` (the built CLI, a local repository cloned through the git gateway, the fixture engine): the SPEC
// §2.6 environment as the engine sees it, stop and wake by prompt, the idle sweep, an engine that
// cannot start, a missing base ref, a repository git will not check out, the cap (429), 401/403 on every route, and an operator killed
// with SIGKILL (the sandbox is found again, never doubled).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { tokenSecret, newToken } from '../../src/lib/api-tokens.js';
import { payloadPid } from '../../src/lib/jail/index.js';
import { buildArtifacts, readUserPrompts } from '../daemon/harness.js';
import { callApi, fixtureEngineArgs, REPO_ROOT, removeDevDir, startDev, type DevInstance } from '../helpers/dev.js';
import { commitFiles, GIT_ENV, makeRepo, run, runOk, waitFor } from '../dev/util.js';
import { fillPendingPrompts } from '../helpers/pending-prompts.js';
import { PENDING_PROMPTS_ANNOTATION, PENDING_PROMPTS_MAX_BYTES } from '../../src/resources/index.js';

let dev: DevInstance;
let repo: string;
let devArgs: string[];
const extraEnv = { SVC_ENGINE_RESTART_BACKOFF_MS: '50' };
const projects: Record<string, string> = {};

interface SessionView {
  id: string; status: string; reason: string | null; message: string | null; branch: string | null; base_sha: string | null; sandbox_state: string | null;
  initial_prompt: string | null; agent: string; model: string | null; timeline: { phase: string; started_at: string; ended_at: string | null }[];
}

const api = <T = Record<string, unknown>>(method: string, urlPath: string, body?: unknown, token: string | null = dev.token) => callApi<T>(dev, method, urlPath, body, token);

const kubectl = (...args: string[]) => runOk('kubectl', args, dev.env);
const svc = (...args: string[]) => runOk(process.execPath, [path.join(REPO_ROOT, 'bin/svc.js'), ...args], dev.env);
const condition = async (id: string, type: string) =>
  JSON.parse(await kubectl('get', 'session', id, '-o', `jsonpath={.status.conditions[?(@.type=="${type}")]}`) || '{}') as { status?: string; reason?: string; message?: string };
const phases = (s: SessionView) => s.timeline.map((p) => p.phase);
const sandboxExists = async (id: string) => (await run('kubectl', ['get', 'sandbox', id, '-o', 'name'], dev.env)).code === 0;
const sessionsPath = (project: string) => `/projects/${projects[project]}/sessions`;

async function startSession(project: string, body: Record<string, unknown> = {}): Promise<SessionView> {
  const res = await api<{ session: SessionView }>('POST', sessionsPath(project), body);
  expect(res.status).toBe(201);
  expect(res.body.session.status).toBe('provisioning');
  return res.body.session;
}

async function waitStatus(project: string, id: string, status: string, timeoutMs = 30_000): Promise<SessionView> {
  return waitFor(`session ${id} ${status}`, async () => {
    const { body } = await api<{ session: SessionView }>('GET', `${sessionsPath(project)}/${id}`);
    return body.session.status === status ? body.session : undefined;
  }, timeoutMs);
}

const sandboxDir = (id: string) => path.join(dev.dataDir, 'sandboxes', 'default', id);
const sandboxPid = (id: string) => (JSON.parse(readFileSync(path.join(sandboxDir(id), 'state.json'), 'utf8')) as { pid: number }).pid;
/** svc-agent itself (its environment is the sandbox's; the recorded pid is the jail's launcher, whose environment a warm sandbox's launcher had before its session). */
const agentPid = (id: string) => { const [pid] = daemonsOf(id); if (pid === undefined) throw new Error(`no svc-agent of session ${id} runs`); return pid; };
const alive = (pid: number) => { try { process.kill(pid, 0); return true; } catch { return false; } };
const engineCalls = (id: string) => {
  const file = path.join(sandboxDir(id), 'home', 'fixture-calls.jsonl');
  return existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { method: string; path: string; body?: { parts?: { text: string }[] } }) : [];
};
/** Daemon processes of one session on this machine (there must never be two): node running svc-agent, not the jail's launchers. */
function daemonsOf(id: string): number[] {
  return readdirSync('/proc').filter((e) => /^\d+$/.test(e)).filter((pid) => {
    try {
      if (readlinkSync(`/proc/${pid}/exe`) !== process.execPath) return false;
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      return cmd.includes('bin/svc-agent.js') && readFileSync(`/proc/${pid}/environ`, 'latin1').includes(`SVC_SESSION_ID=${id}\0`);
    } catch { return false; }
  }).map(Number);
}

async function createProject(name: string, spec: Record<string, unknown> = {}): Promise<void> {
  const project = { apiVersion: 'svc.dev/v1alpha1', kind: 'Project', metadata: { name }, spec: { repoUrl: repo, defaultBranch: 'main', ...spec } };
  await runOk('kubectl', ['apply', '-f', '-'], dev.env, JSON.stringify(project));
  projects[name] = await waitFor(`project ${name}`, async () => (await kubectl('get', 'project', name, '-o', 'jsonpath={.metadata.uid}')) || undefined);
}

beforeAll(async () => {
  const { fixtureEngine } = await buildArtifacts();
  devArgs = [...fixtureEngineArgs(fixtureEngine), '--max-sessions', '20', '--idle-timeout', '30m'];
  dev = await startDev({ extraEnv, args: devArgs });
  repo = path.join(dev.dataDir, 'repo');
  makeRepo(repo, { 'svc.yaml': 'svc_version: 2\ndefault_agent: coder\nagents:\n  coder: {}\n  reviewer: {}\n' });
  await createProject('demo');
  // project secrets, in the Secret the contract names
  await kubectl('create', 'secret', 'generic', 'demo-secrets', '--from-literal=API_KEY=sekrit-123', '--from-literal=DB_URL=postgres://db');
}, 90_000);

afterAll(async () => {
  await dev?.stop();
  if (!dev) return;
  // a failed run may leave sandboxes of an operator that never led: end them by their state files
  const root = path.join(dev.dataDir, 'sandboxes', 'default');
  for (const id of existsSync(root) ? readdirSync(root) : []) {
    try { process.kill(-sandboxPid(id), 'SIGKILL'); } catch { /* gone */ }
    for (const pid of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
      try { if (readFileSync(`/proc/${pid}/environ`, 'latin1').includes(`SVC_ENGINE_HOME=${path.join(root, id, 'home')}\0`)) process.kill(Number(pid), 'SIGKILL'); } catch { /* not ours */ }
    }
  }
  removeDevDir(dev.dataDir);
});

describe('sessions through svc dev', () => {
  let first: SessionView;
  /** The change request `first` opened. */
  let crId: string;

  it('a session gets its branch, a sandbox, and the SPEC §2.6 environment as the engine sees it', async () => {
    first = await startSession('demo', { prompt: 'write the README', model: 'mock/m1' });
    expect(first.agent).toBe('coder'); // the manifest's default_agent
    const running = await waitStatus('demo', first.id, 'running');
    expect(running).toMatchObject({ branch: first.id, sandbox_state: 'active', initial_prompt: 'write the README' });
    const mainSha = execFileSync('git', ['rev-parse', 'main'], { cwd: repo, encoding: 'utf8' }).trim();
    expect(running.base_sha).toBe(mainSha);
    // the boot timeline, every phase ended, in order, up to the initial prompt
    const started = await waitFor('the initial prompt in the timeline', async () => {
      const { body } = await api<{ session: SessionView }>('GET', `${sessionsPath('demo')}/${first.id}`);
      return phases(body.session).includes('prompt') ? body.session : undefined;
    });
    expect(phases(started)).toEqual(['branch', 'credentials', 'sandbox', 'daemon', 'clone', 'restore', 'engine', 'prompt']);
    for (const p of started.timeline) expect(Date.parse(p.ended_at!), p.phase).toBeGreaterThanOrEqual(Date.parse(p.started_at));
    const shown = await svc('sessions', 'show', first.id, '--project', 'demo');
    expect(shown).toMatch(/^Start: {5}took \d/m);
    for (const label of ['branch pushed', 'credentials written', 'sandbox scheduled', 'daemon up', 'repository cloned', 'engine ready', 'first prompt sent']) {
      expect(shown).toMatch(new RegExp(`^  ${label} +\\d+(\\.\\d+)? (ms|s)  at \\+`, 'm'));
    }
    expect(execFileSync('git', ['rev-parse', first.id], { cwd: repo, encoding: 'utf8' }).trim()).toBe(mainSha);

    // through the API's engine proxy (signed context header), to the fixture engine's /fixture/env
    const { status, body: env } = await api<Record<string, string>>('GET', `${sessionsPath('demo')}/${first.id}/engine/fixture/env`);
    expect(status).toBe(200);
    expect(env).toMatchObject({
      SVC_PROJECT_ID: projects.demo,
      SVC_SESSION_ID: first.id,
      SVC_BRANCH_NAME: first.id,
      SVC_HEAD_REF: first.id,
      // isolated, the sandbox reaches the API at the gateway address (docs/sandboxes.md)
      SVC_REPO_URL: `${dev.sandboxApiUrl}/projects/${projects.demo}/git`,
      SVC_DEFAULT_BRANCH: 'main',
      SVC_BASE_REF: 'main',
      SVC_SERVICE_PORT: '8000',
      SVC_API_URL: dev.sandboxApiUrl,
      SVC_AGENT_NAME: 'coder',
      SVC_ENGINE_MODEL: 'mock/m1',
      SVC_INITIAL_PROMPT: 'write the README',
      SVC_PROJECT_AUTO_CLONE: '1',
      SVC_PROJECT_SECRET_NAMES: 'API_KEY,DB_URL',
      SVC_BOOTSTRAP_ENGINE_SESSION: '1',
      API_KEY: 'sekrit-123',
      DB_URL: 'postgres://db',
    });
    expect(env.SVC_API_URL).toMatch(/\/v1$/);
    expect(env.SVC_PROJECT_SECRETS_REVISION).toBe(await kubectl('get', 'secret', 'demo-secrets', '-o', 'jsonpath={.metadata.resourceVersion}'));
    expect(env.SVC_CLI_TOKEN).toMatch(/^svc_/);
    expect(env.SVC_EXECUTOR_TOKEN).toBe(env.SVC_CLI_TOKEN);
    expect(env).not.toHaveProperty('SVC_WORKSPACE');
    const daemonEnv = readFileSync(`/proc/${agentPid(first.id)}/environ`, 'latin1').split('\0');
    const sandboxToken = daemonEnv.find((e) => e.startsWith('SVC_SANDBOX_TOKEN='))!.split('=')[1]!;
    expect(sandboxToken).toMatch(new RegExp(`^svcsbx\\.${first.id}\\.`));
    expect(daemonEnv).toContain(`SVC_TOKEN=${sandboxToken}`);
    // SPEC §2.6: the agent sees the sandbox token and its alias too
    expect(env.SVC_SANDBOX_TOKEN).toBe(sandboxToken);
    expect(env.SVC_TOKEN).toBe(sandboxToken);
    for (const pid of [sandboxPid(first.id), agentPid(first.id)]) expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8')).not.toContain(sandboxToken);

    // the session's CLI token works for its project (CR listing) and is no admin
    const cli = await api('GET', `/projects/${projects.demo}/change-requests`, undefined, env.SVC_CLI_TOKEN);
    expect(cli.status).toBe(200);
    expect((await api('POST', sessionsPath('demo'), {}, env.SVC_CLI_TOKEN)).status).toBe(403);

    // no token value nor secret value in any resource or Event
    const everything = await kubectl('get', 'sessions,sandboxes,projects,events', '-o', 'json');
    for (const secret of [sandboxToken, env.SVC_CLI_TOKEN!, 'sekrit-123']) expect(everything).not.toContain(secret);
    expect(dev.output()).not.toContain(sandboxToken);
    expect(readFileSync(path.join(sandboxDir(first.id), 'daemon.log'), 'utf8')).not.toContain(sandboxToken);
  }, 60_000);

  it("a Session applied with kubectl that names no agent runs the manifest's default_agent: kubectl, REST and the engine say so", async () => {
    const id = randomUUID();
    await runOk('kubectl', ['apply', '-f', '-'], dev.env, JSON.stringify({
      apiVersion: 'svc.dev/v1alpha1', kind: 'Session', metadata: { name: id, namespace: 'default' },
      spec: { projectRef: { name: 'demo' }, baseRef: 'main', desiredState: 'running' },
    }));
    const running = await waitStatus('demo', id, 'running');
    expect(running.agent).toBe('coder'); // it ran the engine's default agent, and kubectl showed "default"
    expect(await kubectl('get', 'session', id, '-o', 'jsonpath={.spec.agent}|{.status.agent}')).toBe('|coder');
    const [, , project, agent] = (await kubectl('get', 'session', id, '--no-headers')).trim().split(/\s+/); // NAME STATUS PROJECT AGENT AGE
    expect([project, agent]).toEqual(['demo', 'coder']);
    const { body: env } = await api<Record<string, string>>('GET', `${sessionsPath('demo')}/${id}/engine/fixture/env`);
    expect(env.SVC_AGENT_NAME).toBe('coder');
    await kubectl('delete', 'session', id);
  });

  it('stop: the sandbox process goes, the branch stays; a prompt wakes it on the same branch without resending the initial prompt', async () => {
    const pid = sandboxPid(first.id);
    const stopped = await api<{ session: SessionView }>('POST', `${sessionsPath('demo')}/${first.id}/stop`);
    expect(stopped.status).toBe(200);
    const after = await waitStatus('demo', first.id, 'stopped');
    expect(after.reason).toBe('Stopped');
    await waitFor('the sandbox process gone', async () => !alive(pid));
    await waitFor('the stopped Sandbox removed (retention)', async () => !(await sandboxExists(first.id)), 60_000);
    expect(execFileSync('git', ['branch', '--list', first.id], { cwd: repo, encoding: 'utf8' })).toContain(first.id);

    const prompted = await api<{ session: SessionView }>('POST', `${sessionsPath('demo')}/${first.id}/prompt`, { text: 'now add tests' });
    expect(prompted.status).toBe(202);
    const woken = await waitStatus('demo', first.id, 'running');
    expect(woken.branch).toBe(first.id);
    expect(woken.reason).toBeNull(); // not the stop's (issue 23: `running (Stopped)`)
    expect(await svc('sessions', 'show', first.id, '--project', 'demo')).toMatch(/^Status: {4}running$/m);
    // the wake's own timeline: no branch (it exists); new credentials (a wake issues them), then its sandbox
    expect(phases(woken).slice(0, 2)).toEqual(['credentials', 'sandbox']);
    expect(sandboxPid(first.id)).not.toBe(pid);
    const prompts = await waitFor('the prompt delivered', async () => {
      const sent = engineCalls(first.id).filter((c) => c.path.endsWith('/prompt_async')).map((c) => c.body?.parts?.[0]?.text);
      return sent.includes('now add tests') ? sent : undefined;
    });
    expect(prompts).not.toContain('write the README');
    const health = JSON.parse(await kubectl('get', 'session', first.id, '-o', 'json')) as { metadata: { annotations?: Record<string, string> } };
    expect(health.metadata.annotations?.['svc.dev/pending-prompts']).toBeUndefined();
    const events = await kubectl('get', 'events', '--field-selector', `involvedObject.name=${first.id}`, '-o', 'jsonpath={.items[*].reason}');
    for (const reason of ['BranchCreated', 'Running', 'Stopped', 'Waking', 'PromptDelivered']) expect(events).toContain(reason);
    const conditions = await kubectl('get', 'session', first.id, '-o', 'jsonpath={range .status.conditions[*]}{.type}={.status};{end}');
    expect(conditions).toContain('Ready=True');
    expect(conditions).toContain('BranchReady=True');
    expect(conditions).toContain('SandboxReady=True');
  }, 60_000);

  it('request-changes on a CR the session opened: the note reaches its engine (the operator delivers it) and the CR says so', async () => {
    // one commit on the session branch, so that a change request can be opened from it
    const gitEnv = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };
    const tree = execFileSync('git', ['rev-parse', `${first.id}^{tree}`], { cwd: repo, encoding: 'utf8' }).trim();
    const commit = execFileSync('git', ['commit-tree', tree, '-p', first.id, '-m', 'work of the session'], { cwd: repo, encoding: 'utf8', env: gitEnv }).trim();
    execFileSync('git', ['update-ref', `refs/heads/${first.id}`, commit], { cwd: repo });
    const opened = await api<{ change_request: { cr_id: string; number: number; origin_session_id: string } }>('POST', `/projects/${projects.demo}/change-requests`, { title: 'From the session', head_ref: first.id, session_id: first.id });
    expect(opened.status).toBe(201);
    expect(opened.body.change_request.origin_session_id).toBe(first.id);
    crId = opened.body.change_request.cr_id;
    // as a reviewer asks on the command line
    expect(await svc('cr', 'request-changes', crId, '--feedback', 'please add a test for it', '--project', 'demo'))
      .toBe(`Requested changes on CR #${opened.body.change_request.number}: the note goes to session ${first.id} as a prompt (svc sessions logs ${first.id} shows it arrive).\n`);

    await waitFor('the note delivered to the root engine session', async () =>
      engineCalls(first.id).some((c) => c.path.endsWith('/prompt_async') && c.body?.parts?.[0]?.text === 'please add a test for it'));
    const cr = await waitFor('the CR to record the delivery', async () => {
      const all = JSON.parse(await kubectl('get', 'changerequests', '-o', 'json')) as { items: { metadata: { uid: string; name: string }; status?: { feedback?: { index: number; state: string }[] } }[] };
      const found = all.items.find((c) => c.metadata.uid === crId);
      return found?.status?.feedback?.[0]?.state === 'delivered' ? found : undefined;
    });
    const events = await kubectl('get', 'events', '--field-selector', `involvedObject.name=${cr.metadata.name}`, '-o', 'jsonpath={.items[*].reason}');
    expect(events).toContain('ChangesRequested');
    expect(events).toContain('FeedbackDelivered');
  }, 60_000);

  it('request-changes while the session\'s waiting prompts are full: the note is undelivered saying why, the session is left as it was (the cluster refused the append, retried without end)', async () => {
    expect((await api('POST', `${sessionsPath('demo')}/${first.id}/stop`)).status).toBe(200);
    await waitStatus('demo', first.id, 'stopped');
    // as much as the prompt route lets wait (192 KiB), and a note of 64 KiB: past the cluster's 256 KiB of annotations
    const waiting = await fillPendingPrompts(dev.env, first.id, PENDING_PROMPTS_MAX_BYTES - 8);
    expect((await api('POST', `/projects/${projects.demo}/change-requests/${crId}/request-changes`, { feedback: 'n'.repeat(65_536) })).status).toBe(200);
    const cr = await waitFor('the second note recorded', async () => {
      const all = JSON.parse(await kubectl('get', 'changerequests', '-o', 'json')) as { items: { metadata: { uid: string; name: string }; status?: { feedback?: { index: number; state: string; message: string }[] } }[] };
      const found = all.items.find((c) => c.metadata.uid === crId);
      return found?.status?.feedback?.some((r) => r.index === 1) ? found : undefined;
    }, 20_000);
    expect(cr.status?.feedback?.find((r) => r.index === 1)).toMatchObject({
      state: 'undelivered',
      message: `session ${first.id} already has 3 prompt(s) waiting, ${PENDING_PROMPTS_MAX_BYTES} bytes at most in all: this note was not queued; request changes again once it took them`,
    });
    const warnings = await kubectl('get', 'events', '--field-selector', `involvedObject.name=${cr.metadata.name},type=Warning`, '-o', 'jsonpath={.items[*].reason}');
    expect(warnings).toContain('FeedbackNotDelivered');
    const session = JSON.parse(await kubectl('get', 'session', first.id, '-o', 'json')) as { spec: { desiredState: string }; metadata: { annotations?: Record<string, string> } };
    expect(session.spec.desiredState).toBe('stopped');
    expect(session.metadata.annotations?.[PENDING_PROMPTS_ANNOTATION]).toBe(JSON.stringify(waiting));
    // the later tests want it running
    await kubectl('annotate', 'session', first.id, `${PENDING_PROMPTS_ANNOTATION}-`);
    expect((await api('POST', `${sessionsPath('demo')}/${first.id}/prompt`, { text: 'carry on' })).status).toBe(202);
    await waitStatus('demo', first.id, 'running');
  }, 60_000);

  it('an initial prompt the engine refuses: Progressing=False (RootSessionFailed) says why in kubectl, REST and `svc sessions show`; svc-agent asks again; stopped meanwhile, the wake gives it first', async () => {
    // refused four times by each engine: asked again after 1, 2, 4 and 8 s
    const s = await startSession('demo', { prompt: '#fixture {"refuse":4,"end":true}' });
    const why = 'the initial prompt was not delivered: engine refused the initial prompt (500); svc-agent tries again';
    const stuck = await waitFor('Progressing=False', async () => { const c = await condition(s.id, 'Progressing'); return c.status === 'False' ? c : undefined; });
    expect(stuck).toMatchObject({ reason: 'RootSessionFailed', message: why });
    expect((await api<{ session: { progress_error: string | null } }>('GET', `${sessionsPath('demo')}/${s.id}`)).body.session.progress_error).toBe(why);
    expect(await svc('sessions', 'show', s.id, '--project', 'demo')).toContain(`Engine:    ${why}`);
    // stopped before its engine took it: the wake gives it again, before the prompt that woke it
    expect((await api('POST', `${sessionsPath('demo')}/${s.id}/stop`)).status).toBe(200);
    await waitStatus('demo', s.id, 'stopped');
    expect(await kubectl('get', 'session', s.id, '-o', 'jsonpath={.status.startedAt}')).toBe('');
    expect((await api('POST', `${sessionsPath('demo')}/${s.id}/prompt`, { text: '#fixture {"end":true}' })).status).toBe(202);
    const userMessages = () => readUserPrompts(path.join(dev.dataDir, 'sandboxes', 'default', s.id, 'home'));
    await waitFor('both prompts taken', async () => userMessages().length === 2 || undefined, 60_000);
    expect(userMessages()).toEqual(['#fixture {"refuse":4,"end":true}', '#fixture {"end":true}']);
    await waitFor('Progressing=True once the engine took it', async () => (await condition(s.id, 'Progressing')).status === 'True' || undefined);
    expect((await api<{ session: { progress_error: string | null } }>('GET', `${sessionsPath('demo')}/${s.id}`)).body.session.progress_error).toBeNull();
    expect(await kubectl('get', 'session', s.id, '-o', 'jsonpath={.status.startedAt}')).not.toBe('');
    expect((await api('POST', `${sessionsPath('demo')}/${s.id}/stop`)).status).toBe(200);
  }, 120_000);

  it('an engine that cannot reach its model: ModelReachable=False with its error, `svc sessions logs` prints it; True once the turn ends; a turn that fails: Progressing=False (TurnFailed)', async () => {
    const s = await startSession('demo');
    await waitStatus('demo', s.id, 'running');
    await waitFor('ModelReachable=True', async () => (await condition(s.id, 'ModelReachable')).status === 'True' || undefined);
    const logs = spawn(process.execPath, [path.join(REPO_ROOT, 'bin/svc.js'), 'sessions', 'logs', s.id, '--project', 'demo'], { env: dev.env });
    let out = '';
    logs.stdout.on('data', (c: Buffer) => { out += c.toString(); });
    logs.stderr.on('data', (c: Buffer) => { out += c.toString(); });
    try {
      await waitFor('the log stream connected', async () => out.includes('server.connected') || undefined);
      expect((await api('POST', `${sessionsPath('demo')}/${s.id}/prompt`, { text: '#fixture {"retry":"Cannot connect to API: ECONNREFUSED"}' })).status).toBe(202);
      const unreachable = await waitFor('ModelReachable=False', async () => { const c = await condition(s.id, 'ModelReachable'); return c.status === 'False' ? c : undefined; });
      expect(unreachable).toMatchObject({ reason: 'ModelUnreachable', message: 'cannot reach the model: Cannot connect to API: ECONNREFUSED (attempt 1)' });
      await waitFor('the retry error in the logs', async () => out.includes('status: "retry": cannot reach the model: Cannot connect to API: ECONNREFUSED (attempt 1)') || undefined)
        .catch((error: Error) => { throw new Error(`${error.message}\n${out}`); });
      const events = await kubectl('get', 'events', '--field-selector', `involvedObject.name=${s.id},reason=ModelUnreachable`, '-o', 'jsonpath={.items[*].message}');
      expect(events).toBe('cannot reach the model: Cannot connect to API: ECONNREFUSED (attempt 1)');
      // REST and `svc sessions show`: the error, not a bare "running"
      const view = (await api<{ session: { status: string; model_error: string | null } }>('GET', `${sessionsPath('demo')}/${s.id}`)).body.session;
      expect(view).toMatchObject({ status: 'running', model_error: 'cannot reach the model: Cannot connect to API: ECONNREFUSED (attempt 1)' });
      expect(await svc('sessions', 'show', s.id, '--project', 'demo')).toContain('Model:     cannot reach the model: Cannot connect to API: ECONNREFUSED (attempt 1)');
    } finally {
      logs.kill();
    }
    expect((await api('POST', `${sessionsPath('demo')}/${s.id}/prompt`, { text: '#fixture {"end":true}' })).status).toBe(202);
    await waitFor('ModelReachable=True again', async () => (await condition(s.id, 'ModelReachable')).status === 'True' || undefined);
    expect(await svc('sessions', 'show', s.id, '--project', 'demo')).not.toContain('Model:');

    // a turn the engine ends with an error (a model it does not know, a provider's refusal):
    // Progressing=False (TurnFailed) with it, a Warning, REST and `svc sessions show`; the next turn clears it
    expect((await api('POST', `${sessionsPath('demo')}/${s.id}/prompt`, { text: '#fixture {"fail":"Model not found: nosuch/x."}' })).status).toBe(202);
    const why = 'the engine\'s last turn failed: Model not found: nosuch/x.; a new prompt starts another';
    const failed = await waitFor('Progressing=False (TurnFailed)', async () => { const c = await condition(s.id, 'Progressing'); return c.reason === 'TurnFailed' ? c : undefined; });
    expect(failed).toMatchObject({ status: 'False', message: why });
    expect((await api<{ session: { status: string; progress_error: string | null } }>('GET', `${sessionsPath('demo')}/${s.id}`)).body.session).toMatchObject({ status: 'running', progress_error: why });
    expect(await svc('sessions', 'show', s.id, '--project', 'demo')).toContain(`Engine:    ${why}`);
    await waitFor('the TurnFailed Warning', async () => (await kubectl('get', 'events', '--field-selector', `involvedObject.name=${s.id},reason=TurnFailed`, '-o', 'jsonpath={.items[*].message}')) === why || undefined);
    expect((await api('POST', `${sessionsPath('demo')}/${s.id}/prompt`, { text: '#fixture {"end":true}' })).status).toBe(202);
    await waitFor('Progressing=True with the next turn', async () => (await condition(s.id, 'Progressing')).status === 'True' || undefined);
    expect(await svc('sessions', 'show', s.id, '--project', 'demo')).not.toContain('Engine:');
    // a follow ends with its session: `svc sessions logs` says the session stopped and exits 0
    const follow = spawn(process.execPath, [path.join(REPO_ROOT, 'bin/svc.js'), 'sessions', 'logs', s.id, '--project', 'demo'], { env: dev.env });
    let followed = '';
    let said = '';
    follow.stdout.on('data', (c: Buffer) => { followed += c.toString(); });
    follow.stderr.on('data', (c: Buffer) => { said += c.toString(); });
    const exited = new Promise<number | null>((resolve) => follow.once('exit', resolve));
    try {
      await waitFor('the second follow connected', async () => followed.includes('server.connected') || undefined);
      expect((await api('POST', `${sessionsPath('demo')}/${s.id}/stop`)).status).toBe(200);
      expect(await exited).toBe(0);
      expect(said).toMatch(new RegExp(`^svc: session ${s.id} (stopped \\(Stopped\\)|is being stopped)`));
    } finally {
      follow.kill();
    }
  }, 60_000);

  it('the idle sweep stops a quiet session (reason Idle)', async () => {
    await createProject('sleepy', { idleTimeoutSeconds: 3 });
    const s = await startSession('sleepy');
    await waitStatus('sleepy', s.id, 'running');
    const idle = await waitStatus('sleepy', s.id, 'stopped', 30_000);
    expect(idle.reason).toBe('Idle');
    expect(idle.sandbox_state).toBe('stopped');
  }, 60_000);

  it('fails with a reason: an engine that cannot start, a base ref that does not exist, an unknown agent is 400', async () => {
    const broken = path.join(dev.dataDir, 'broken');
    makeRepo(broken, { 'svc.yaml': 'svc_version: 2\ndefault_agent: a\nagents:\n  a: {}\nengine:\n  config_dir: /etc\n' });
    await createProject('broken', { repoUrl: broken });
    const s = await startSession('broken');
    const failed = await waitStatus('broken', s.id, 'failed');
    expect(failed.reason).toBe('EngineFailed');
    const message = await kubectl('get', 'session', s.id, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].message}');
    expect(message).toContain('config_dir');
    // why, where people look: REST and `svc sessions show`
    expect(failed.message).toBe(message);
    expect(await svc('sessions', 'show', s.id, '--project', 'broken')).toContain(`Status:    failed (EngineFailed)\nMessage:   ${message}\n`);
    // a failed session keeps no sandbox process
    await waitFor('the failed sandbox stopped', async () => !existsSync(path.join(sandboxDir(s.id), 'state.json')));
    expect(await kubectl('get', 'sandbox', s.id, '-o', 'jsonpath={.status.state}')).toBe('error');

    const noBase = await startSession('demo', { base_ref: 'no-such-branch' });
    const noBaseFailed = await waitStatus('demo', noBase.id, 'failed');
    expect(noBaseFailed).toMatchObject({ reason: 'BaseRefNotFound', message: expect.stringContaining('the base ref no-such-branch does not exist in') });
    // its logs say why it has none, in the words of svc sessions show (before: "svc keeps the log of a failed session's sandbox", to a failed session)
    const logsOf = (...args: string[]) => run(process.execPath, [path.join(REPO_ROOT, 'bin/svc.js'), 'sessions', 'logs', noBase.id, '--project', 'demo', ...args], dev.env);
    const failure = `BaseRefNotFound: ${noBaseFailed.message}`;
    expect((await logsOf('--daemon')).stderr).toBe(`svc: no sandbox log is kept for session ${noBase.id}: it failed (${failure}) with no sandbox output to keep (HTTP 404)\n`);
    expect((await logsOf()).stderr).toBe(`svc: session ${noBase.id} failed (${failure}); its sandbox's log, when one is kept: svc sessions logs ${noBase.id} --daemon; start a new session (HTTP 409)\n`);
    // an abbreviated commit id, as `git log --oneline` shows one, is taken as git takes it
    const tip = (await runOk('git', ['-C', repo, 'rev-parse', 'main'])).trim();
    const fromCommit = await startSession('demo', { base_ref: tip.slice(0, 9) });
    expect(await waitStatus('demo', fromCommit.id, 'running')).toMatchObject({ base_sha: tip, branch: fromCommit.id });
    await api('POST', `${sessionsPath('demo')}/${fromCommit.id}/stop`);
    // REST refuses a name git cannot take (400); a Session applied with kubectl says so once failed
    expect((await api('POST', sessionsPath('demo'), { base_ref: '--upload-pack=touch' })).status).toBe(400);
    const applied = '00000000-0000-4000-8000-0000000000ba';
    await runOk('kubectl', ['apply', '-f', '-'], dev.env, JSON.stringify({
      apiVersion: 'svc.dev/v1alpha1', kind: 'Session', metadata: { name: applied, namespace: 'default' },
      spec: { projectRef: { name: 'demo' }, baseRef: '--upload-pack=touch', desiredState: 'running' },
    }));
    const invalid = await waitStatus('demo', applied, 'failed');
    expect(invalid.reason).toBe('BaseRefNotFound');
    expect(invalid.message).toContain('the base ref "--upload-pack=touch" is not a valid branch name or commit id (starts with "-")');
    // applied under a name that is not a session id: failed at once, saying why (it had no status,
    // only an error in the operator's log at every look); nothing pushed, and deleting it leaves the branch of that name
    await runOk('git', ['-C', repo, 'branch', 'my-session', 'main']);
    await runOk('kubectl', ['apply', '-f', '-'], dev.env, JSON.stringify({
      apiVersion: 'svc.dev/v1alpha1', kind: 'Session', metadata: { name: 'my-session', namespace: 'default' },
      spec: { projectRef: { name: 'demo' }, baseRef: 'main', desiredState: 'running' },
    }));
    await waitFor('my-session failed', async () => (await kubectl('get', 'session', 'my-session', '-o', 'jsonpath={.status.reason}')) === 'InvalidName');
    expect(await kubectl('get', 'session', 'my-session', '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].message}'))
      .toBe('a Session\'s name is its session id, a UUID (e.g. from uuidgen), and "my-session" is not one: delete it and apply it under a UUID name, or start it with svc sessions start');
    expect(await kubectl('get', 'sandbox', 'my-session', '--ignore-not-found')).toBe('');
    await kubectl('delete', 'session', 'my-session');
    expect((await runOk('git', ['-C', repo, 'branch', '--list', 'my-session'])).trim()).toBe('my-session');

    const unknown = await api<{ error: string }>('POST', sessionsPath('demo'), { agent: 'ghost' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toContain('coder, reviewer');
  }, 60_000);

  it("a repository git will not check out (a tree entry named .git): failed (CloneFailed), with git's words", async () => {
    // A commit the host and the operator's bare mirror take as they are; git refuses to write
    // `.git/config` into a working tree, so svc-agent's clone fails for a permanent reason.
    const hostile = path.join(dev.dataDir, 'hostile');
    makeRepo(hostile, { 'svc.yaml': 'svc_version: 2\ndefault_agent: coder\nagents:\n  coder: {}\n' });
    const git = (args: string[], input?: string) => execFileSync('git', args, { cwd: hostile, encoding: 'utf8', input, env: GIT_ENV }).trim();
    const blob = git(['hash-object', '-w', '--stdin'], '[core]\n\thooksPath = /tmp\n');
    const dotGit = git(['mktree'], `100644 blob ${blob}\tconfig\n`);
    const root = git(['mktree'], `${git(['ls-tree', 'HEAD'])}\n040000 tree ${dotGit}\t.git\n`);
    git(['update-ref', 'refs/heads/main', git(['commit-tree', root, '-p', 'HEAD', '-m', 'a tree entry named .git'])]);
    await createProject('hostile', { repoUrl: hostile });

    const s = await startSession('hostile');
    const failed = await waitStatus('hostile', s.id, 'failed');
    expect(failed.reason).toBe('CloneFailed');
    expect(failed.message).toMatch(/^svc-agent failed: clone failed: .*\.git\/config/s);
    expect(await kubectl('get', 'sandbox', s.id, '-o', 'jsonpath={.status.reason}')).toBe('CloneFailed');
    expect(await svc('sessions', 'show', s.id, '--project', 'hostile')).toContain('Status:    failed (CloneFailed)\n');
    // the branch push went through (it is the clone that failed), and nothing was retried
    expect((await condition(s.id, 'BranchReady')).status).toBe('True');
    // its sandbox's log is kept once the sandbox is gone
    const log = await waitFor('the kept sandbox log', async () => (await run(process.execPath, [path.join(REPO_ROOT, 'bin/svc.js'), 'sessions', 'logs', s.id, '--daemon', '--project', 'hostile'], dev.env)).stdout || undefined);
    expect(log).toContain('workspace setup failed: clone failed');
    expect(log).not.toContain('trying again');
  }, 60_000);

  it('429 over the account cap (Namespace annotation)', async () => {
    await kubectl('annotate', 'namespace', 'default', 'svc.dev/max-concurrent-sessions=1', '--overwrite');
    try {
      const over = await api<{ error: string }>('POST', sessionsPath('demo'), {});
      expect(over.status).toBe(429);
      expect(over.body.error).toMatch(/limit of 1/);
    } finally {
      await kubectl('annotate', 'namespace', 'default', 'svc.dev/max-concurrent-sessions-');
    }
  });

  it('401 without a valid token (a sandbox token included) and 403 without the access, on every route', async () => {
    const base = sessionsPath('demo');
    const routes: [string, string, unknown?][] = [
      ['POST', base, {}], ['GET', base], ['GET', `${base}/${first.id}`], ['POST', `${base}/${first.id}/stop`],
      ['POST', `${base}/${first.id}/prompt`, { text: 'x' }], ['GET', `${base}/${first.id}/engine/session`],
      ['POST', `${base}/${first.id}/engine/session`, {}], ['GET', `${base}/${first.id}/proxy/3000/`],
    ];
    const sandboxToken = readFileSync(`/proc/${agentPid(first.id)}/environ`, 'latin1').split('\0').find((e) => e.startsWith('SVC_SANDBOX_TOKEN='))!.slice('SVC_SANDBOX_TOKEN='.length);
    const mint = async (grant: { access: 'read' | 'write'; projectUid?: string; capabilities: string[] }) => {
      const token = newToken();
      const secret = tokenSecret(token, { userId: randomUUID(), ...grant }, 'default');
      await runOk('kubectl', ['apply', '-f', '-'], dev.env, JSON.stringify(secret));
      return token;
    };
    const reader = await mint({ access: 'read', capabilities: [] });
    const otherProject = await mint({ access: 'write', projectUid: randomUUID(), capabilities: ['*'] });
    const writerWithoutCaps = await mint({ access: 'write', capabilities: [] });
    for (const [method, url, body] of routes) {
      expect((await api(method, url, body, '')).status, `${method} ${url} without a token`).toBe(401);
      expect((await api(method, url, body, sandboxToken)).status, `${method} ${url} with the sandbox token`).toBe(401);
      expect((await api(method, url, body, otherProject)).status, `${method} ${url} with another project's token`).toBe(403);
      if (method !== 'GET') expect((await api(method, url, body, reader)).status, `${method} ${url} read-only`).toBe(403);
    }
    for (const [method, url, body] of routes.filter(([m, u]) => m === 'POST' && !u.includes('/engine/'))) {
      expect((await api(method, url, body, writerWithoutCaps)).status, `${method} ${url} without the capability`).toBe(403);
    }
  }, 60_000);

  it('an operator killed with SIGKILL: the restarted operator finds the sandbox again; never two', async () => {
    const s = await startSession('demo', { prompt: 'survive' });
    await waitStatus('demo', s.id, 'running');
    const pid = sandboxPid(s.id);
    const operator = readdirSync('/proc').filter((e) => /^\d+$/.test(e)).find((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('operator.js') && readFileSync(`/proc/${p}/environ`, 'latin1').includes(`SVC_SANDBOX_DIR=${path.join(dev.dataDir, 'sandboxes')}\0`);
      } catch { return false; }
    });
    expect(operator).toBeDefined();
    process.kill(Number(operator), 'SIGKILL');
    // svc dev stops when a child dies (docs/dev.md)
    await waitFor('svc dev to exit', async () => dev.process.exitCode !== null || dev.process.signalCode !== null);
    expect(dev.process.exitCode).toBe(1);
    expect(alive(pid)).toBe(true); // the sandbox outlived its operator
    dev = await startDev({ dataDir: dev.dataDir, extraEnv, args: devArgs });
    // the killed operator's Lease runs out first (15 s)
    await waitFor('the new operator to lead', async () => dev.output().includes(': leading'), 40_000);
    await waitFor('the session seen running by the new operator', async () => {
      const body = JSON.parse(await kubectl('get', 'session', s.id, '-o', 'json')) as { status?: { status?: string; sandboxState?: string } };
      return body.status?.status === 'running' && body.status.sandboxState === 'active' ? true : undefined;
    }, 30_000);
    // give the new operator a few reconciles: it must adopt, not start another
    await new Promise((r) => setTimeout(r, 6000));
    expect(sandboxPid(s.id)).toBe(pid);
    // one daemon, the one the recorded sandbox runs (jailed: below its launcher)
    expect(daemonsOf(s.id)).toEqual([payloadPid(pid)]);
    expect(await kubectl('get', 'session', s.id, '-o', 'jsonpath={.status.status}')).toBe('running');
  }, 120_000);

  it('deleting a session removes its sandbox process, its Sandbox, its Secret and revokes its CLI token', async () => {
    const s = await startSession('demo');
    await waitStatus('demo', s.id, 'running');
    const pid = sandboxPid(s.id);
    const cliToken = readFileSync(`/proc/${agentPid(s.id)}/environ`, 'latin1').split('\0').find((e) => e.startsWith('SVC_CLI_TOKEN='))!.slice('SVC_CLI_TOKEN='.length);
    expect((await api('GET', `/projects/${projects.demo}/change-requests`, undefined, cliToken)).status).toBe(200);
    await kubectl('delete', 'session', s.id, '--wait=true', '--timeout=30s');
    await waitFor('the sandbox process gone', async () => !alive(pid));
    await waitFor('the Sandbox gone', async () => (await kubectl('get', 'sandboxes', '-o', 'name')).includes(s.id) ? undefined : true);
    await waitFor('the Session Secret gone', async () => (await kubectl('get', 'secrets', '-o', 'name')).includes(`svc-session-${s.id}`) ? undefined : true);
    await waitFor('the CLI token revoked', async () => (await api('GET', `/projects/${projects.demo}/change-requests`, undefined, cliToken)).status === 401);
    const events = await kubectl('get', 'events', '--field-selector', `involvedObject.name=${s.id}`, '-o', 'jsonpath={.items[*].reason}');
    expect(events).toContain('Archived');
  }, 60_000);

  it('a listing cut to the newest N (?limit, svc sessions ls --limit) says how many there are; a bad limit is 400', async () => {
    const all = (await api<{ sessions: SessionView[]; total?: number }>('GET', sessionsPath('demo'))).body;
    expect(all.total).toBeUndefined();
    expect(all.sessions.length).toBeGreaterThan(2);
    const cut = (await api<{ sessions: SessionView[]; total: number }>('GET', `${sessionsPath('demo')}?status=all&limit=2`)).body;
    // ids only: a running session's activity may move between the two reads
    expect({ ids: cut.sessions.map((x) => x.id), total: cut.total }).toEqual({ ids: all.sessions.slice(0, 2).map((x) => x.id), total: all.sessions.length });
    for (const bad of ['0', '-1', 'x', '1e2', '10001']) {
      const res = await api<{ error: string }>('GET', `${sessionsPath('demo')}?limit=${bad}`);
      expect(res, bad).toMatchObject({ status: 400, body: { error: 'limit must be a whole number from 1 to 10000' } });
    }
    const lines = (await svc('sessions', 'ls', '--limit', '2', '--project', 'demo')).trimEnd().split('\n');
    expect(lines.slice(1, 3).map((l) => l.split(/\s+/)[0])).toEqual(all.sessions.slice(0, 2).map((s) => s.id));
    expect(lines.slice(3)).toEqual([`(the newest 2 of ${all.sessions.length}; a larger --limit lists more)`]);
  });

  it('a stopped svc dev leaves no sandbox process behind', async () => {
    const ids = (await api<{ sessions: SessionView[] }>('GET', `${sessionsPath('demo')}?status=running`)).body.sessions.map((s) => s.id);
    expect(ids.length).toBeGreaterThan(0);
    const pids = ids.map(sandboxPid);
    expect(await dev.stop()).toBe(0);
    await waitFor('sandbox processes gone', async () => pids.every((p) => !alive(p)), 20_000).catch((error: Error) => {
      throw new Error(`${error.message}; alive: ${pids.filter(alive).join(', ')}\n${dev.output().slice(-3000)}`);
    });
    commitFiles(repo, { 'after.txt': 'x' }, 'after');
  }, 60_000);
});
