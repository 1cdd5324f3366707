// Issue 12 §5: `svc dev --provider kubernetes`. Sessions run as real Pods and Secrets in the local
// cluster, played by the node simulator (the real svc-agent, the fixture engine): checked with
// kubectl, health through the pod IP, stop deletes both, a pod killed from outside is reported at
// once (by its watch, also when its daemon is frozen and says nothing),
// a sandbox over its disk is evicted, an engine that cannot start and an image that cannot be
// pulled fail the session with the reason, and no token value ever sits in a Pod spec.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fixtureEngineArgs, removeDevDir, startDev, type DevInstance } from '../helpers/dev.js';
import { buildArtifacts, cleanupArtifacts } from '../daemon/harness.js';
import { sessionProcesses } from '../helpers/processes.js';
import { makeRepo, run, runOk, waitFor } from './util.js';

let tmp: string;
let dev: DevInstance;
const projectIds = new Map<string, string>();

const kubectl = (...args: string[]) => runOk('kubectl', args, dev.env);
const kubectlJson = async <T>(...args: string[]) => JSON.parse(await kubectl(...args, '-o', 'json')) as T;
const exists = async (kind: string, name: string) => (await run('kubectl', ['get', kind, name, '-o', 'name'], dev.env)).code === 0;

interface SessionView { id: string; status: string; reason: string | null; message: string | null; sandbox_state: string | null }
interface PodView { metadata: { name: string; ownerReferences: { kind: string; name: string }[] }; spec: Record<string, unknown>; status: { phase?: string; podIP?: string } }
interface SandboxView { status?: { state?: string; address?: string; reason?: string; podName?: string } }

async function api<T>(method: string, urlPath: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(dev.apiUrl + urlPath, {
    method,
    headers: { authorization: `Bearer ${dev.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as T };
}

async function project(name: string, sandbox?: Record<string, unknown>): Promise<void> {
  const repo = path.join(tmp, `repo-${name}`);
  makeRepo(repo, { 'README.md': `# ${name}\n` });
  const manifest = { apiVersion: 'svc.dev/v1alpha1', kind: 'Project', metadata: { name, namespace: 'default' }, spec: { repoUrl: repo, defaultBranch: 'main', ...(sandbox ? { sandbox } : {}) } };
  await runOk('kubectl', ['apply', '-f', '-'], dev.env, JSON.stringify(manifest));
  projectIds.set(name, (await kubectl('get', 'project', name, '-o', 'jsonpath={.metadata.uid}')).trim());
  await waitFor(`project ${name} ready`, async () => (await kubectl('get', 'project', name, '-o', 'jsonpath={.status.defaultBranchSha}')).trim() !== '', 60_000);
}

async function startSession(projectName: string, body: Record<string, unknown> = {}): Promise<string> {
  const res = await api<{ session: SessionView }>('POST', `/projects/${projectIds.get(projectName)}/sessions`, body);
  expect(res.status).toBe(201);
  return res.body.session.id;
}

function sessionUntil(projectName: string, id: string, check: (s: SessionView) => boolean, what: string, timeoutMs = 90_000): Promise<SessionView> {
  return waitFor(what, async () => {
    const res = await api<{ session: SessionView }>('GET', `/projects/${projectIds.get(projectName)}/sessions/${id}`);
    return res.status === 200 && check(res.body.session) ? res.body.session : undefined;
  }, timeoutMs);
}

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'svc-dev-k8s-'));
  const { fixtureEngine } = await buildArtifacts();
  // An engine that refuses to start when the project has the secret FAIL_ENGINE (it arrives
  // through the sandbox Secret like every project secret); split into words, never a shell.
  const engine = fixtureEngineArgs(fixtureEngine, (command) => {
    const script = `if [ -n "$FAIL_ENGINE" ]; then echo "engine refuses to start: $FAIL_ENGINE" >&2; exit 3; fi; exec ${command} --port "$1"`;
    return `/bin/sh -c '${script.replaceAll("'", "'\\''")}' engine {port}`;
  });
  dev = await startDev({
    dataDir: path.join(tmp, 'dev'),
    args: ['--provider', 'kubernetes', ...engine],
    // a failing engine gives up fast; a sandbox is looked at without being told once an hour, so
    // what these tests see of a Pod reached the operator by the Pod's own change
    extraEnv: { SVC_ENGINE_MAX_RESTARTS: '1', SVC_ENGINE_RESTART_BACKOFF_MS: '100', SVC_SANDBOX_RESYNC_PROVISIONING_SECONDS: '3600', SVC_SANDBOX_RESYNC_RUNNING_SECONDS: '3600' },
    timeoutMs: 90_000,
  });
  await project('web');
}, 180_000);

afterAll(async () => {
  await dev?.stop();
  removeDevDir(tmp);
  cleanupArtifacts();
});

describe('svc dev --provider kubernetes', () => {
  let first: string;

  it('runs a session as a Pod plus a Secret, the daemon answering at the pod IP, no token in the Pod spec', async () => {
    expect(dev.output()).toContain('sandboxes run as Pods on the node simulator');
    first = await startSession('web');
    await sessionUntil('web', first, (s) => s.status === 'running', 'the session running');
    const pod = await kubectlJson<PodView>('get', 'pod', `svc-sandbox-${first}`);
    expect(pod.status.phase).toBe('Running');
    expect(pod.status.podIP).toMatch(/^10\.\d+\.\d+\.\d+$/);
    expect(pod.metadata.ownerReferences[0]).toMatchObject({ kind: 'Sandbox', name: first });
    expect(await exists('secret', `svc-sandbox-${first}`)).toBe(true);

    // token values only in Secrets: the Session's, and the sandbox's (by reference from the Pod)
    const sessionSecret = await kubectlJson<{ data: Record<string, string> }>('get', 'secret', `svc-session-${first}`);
    const tokens = Object.values(sessionSecret.data).map((v) => Buffer.from(v, 'base64').toString());
    expect(tokens.length).toBeGreaterThanOrEqual(2);
    const podText = JSON.stringify(pod.spec);
    for (const token of tokens) expect(podText).not.toContain(token);
    expect(podText).toContain(`"secretRef":{"name":"svc-sandbox-${first}"}`);

    const sandbox = await kubectlJson<SandboxView>('get', 'sandbox', first);
    expect(sandbox.status?.address).toBe(`${pod.status.podIP}:8000`);
    const health = (await (await fetch(`http://${sandbox.status!.address}/svc/health`)).json()) as { status: string; engine: { state: string } };
    expect(health).toMatchObject({ status: 'ok', engine: { state: 'ready' } });
  }, 150_000);

  it('notices a pod killed from outside and reports it', async () => {
    await kubectl('delete', 'pod', `svc-sandbox-${first}`, '--wait=false');
    const failed = await sessionUntil('web', first, (s) => s.status === 'failed', 'the session failed');
    expect(failed.reason).toBe('PodDeleted');
    // a failed session keeps nothing running: the sandbox Secret goes too
    await waitFor('the sandbox Secret gone', async () => !(await exists('secret', `svc-sandbox-${first}`)));
  }, 150_000);

  it('notices at once a pod deleted while its daemon cannot say a word (frozen)', async () => {
    const id = await startSession('web');
    await sessionUntil('web', id, (s) => s.status === 'running', 'the session running');
    // its start's last state event told and acted on: from now on nothing wakes its controllers
    // but a change of the Pod
    const lastEvent = () => kubectl('get', 'sandbox', id, '-o', `jsonpath={.metadata.annotations.svc\\.dev/daemon-event}`);
    let seen = await lastEvent();
    await waitFor('the daemon quiet for 3 s', async () => {
      await new Promise((resolve) => setTimeout(resolve, 3000));
      const now = await lastEvent();
      if (now === seen) return true;
      seen = now;
      return false;
    }, 60_000);
    const frozen = sessionProcesses(id);
    expect(frozen.length).toBeGreaterThan(0);
    for (const pid of frozen) process.kill(pid, 'SIGSTOP');
    try {
      await kubectl('delete', 'pod', `svc-sandbox-${id}`, '--wait=false');
      const failed = await sessionUntil('web', id, (s) => s.status === 'failed', 'the session failed', 30_000);
      expect(failed).toMatchObject({ reason: 'PodDeleted', sandbox_state: 'error' });
    } finally {
      for (const pid of frozen) try { process.kill(pid, 'SIGCONT'); } catch { /* gone */ }
    }
    await waitFor('the Pod gone', async () => !(await exists('pod', `svc-sandbox-${id}`)), 60_000);
  }, 150_000);

  it('stop deletes the Pod and the Secret, stopped only once the Pod is gone, its work saved on the way out; the branch stays', async () => {
    // a turn that writes a file and never ends: only the stop's checkpoint can save it
    const id = await startSession('web', { prompt: `#fixture ${JSON.stringify({ write: { 'unsaved.txt': 'work in progress\n' } })}` });
    await sessionUntil('web', id, (s) => s.status === 'running', 'the second session running');
    await waitFor('the prompt sent (the file written)', async () => {
      const health = (await (await fetch(`http://${(await kubectlJson<SandboxView>('get', 'sandbox', id)).status!.address}/svc/health`)).json()) as { engine: { initial_prompt_sent_at: string | null } };
      return health.engine.initial_prompt_sent_at !== null;
    });
    expect((await api('POST', `/projects/${projectIds.get('web')}/sessions/${id}/stop`)).status).toBeLessThan(300);
    await sessionUntil('web', id, (s) => s.status === 'stopped', 'the session stopped');
    // the Pod ran its grace (svc-agent's stop checkpoint, pushed while its credentials still held)
    expect(await exists('pod', `svc-sandbox-${id}`)).toBe(false);
    const repo = path.join(tmp, 'repo-web');
    const saved = execFileSync('git', ['-C', repo, 'show', `refs/svc/checkpoints/${id}:unsaved.txt`], { encoding: 'utf8' });
    expect(saved).toBe('work in progress\n');
    await waitFor('pod and secret gone', async () => !(await exists('pod', `svc-sandbox-${id}`)) && !(await exists('secret', `svc-sandbox-${id}`)));
    expect(await exists('session', id)).toBe(true);
    // the stopped Sandbox goes too (retention); the Session stays the record
    await waitFor('the Sandbox gone', async () => !(await exists('sandbox', id)), 60_000);
    expect((await api<{ session: SessionView }>('GET', `/projects/${projectIds.get('web')}/sessions/${id}`)).body.session).toMatchObject({ status: 'stopped', sandbox_state: 'stopped' });
  }, 150_000);

  it('a sandbox that fills its disk is evicted as a kubelet evicts its Pod: the session fails Evicted, saying which limit', async () => {
    await project('small', { disk: 2 });
    const id = await startSession('small', { prompt: `#fixture ${JSON.stringify({ spawn: 'head -c 4194304 /dev/zero > big.bin' })}` });
    // the node measures its pods every 10 s
    const failed = await sessionUntil('small', id, (s) => s.status === 'failed', 'the session failed', 60_000);
    expect(failed).toMatchObject({ reason: 'Evicted', sandbox_state: 'error' });
    expect(failed.message).toContain('Usage of EmptyDir volume "workspace" exceeds the limit "2Mi".');
    await waitFor('the Pod gone', async () => !(await exists('pod', `svc-sandbox-${id}`)), 60_000);
  }, 150_000);

  it('an engine that cannot start fails the session with the reason', async () => {
    await runOk('kubectl', ['create', 'secret', 'generic', 'broken-secrets', '--from-literal=FAIL_ENGINE=on purpose'], dev.env);
    await project('broken');
    const id = await startSession('broken');
    const failed = await sessionUntil('broken', id, (s) => s.status === 'failed', 'the session failed');
    expect(failed.reason).toBe('EngineFailed');
    const ready = await kubectl('get', 'session', id, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].message}');
    expect(ready).toContain('the engine could not start');
    // its Pod's log is kept with the Session (read through pods/log before the Pod goes), the secret masked
    const log = await waitFor('the kept log', async () => {
      const res = await fetch(`${dev.apiUrl}/projects/${projectIds.get('broken')}/sessions/${id}/daemon-log`, { headers: { authorization: `Bearer ${dev.token}` } });
      return res.status === 200 ? res.text() : undefined;
    });
    expect(log).toContain('engine refuses to start: ***');
    expect(log).not.toContain('on purpose');
    await waitFor('the Pod gone', async () => !(await exists('pod', `svc-sandbox-${id}`)));
  }, 150_000);

  it('an image the node cannot pull fails the session with the pod reason', async () => {
    await project('private', { image: 'registry.example/private:1' });
    const id = await startSession('private');
    const failed = await sessionUntil('private', id, (s) => s.status === 'failed', 'the session failed');
    expect(failed.reason).toMatch(/^(ErrImagePull|ImagePullBackOff)$/);
    const ready = await kubectl('get', 'session', id, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].message}');
    expect(ready).toContain('registry.example/private:1');
  }, 150_000);
});
