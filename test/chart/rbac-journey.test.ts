/* eslint-disable @typescript-eslint/no-explicit-any -- JSON response bodies, asserted field by field */
// Issue 14 §3: the chart's RBAC, rendered and installed by the real helm into the local cluster
// with authorization on, is enough for the real operator and API running as their
// ServiceAccounts (tokens from `kubectl create token`) through a whole journey: project,
// trigger sync, project secrets, the model gateway (a provider, a budget; the session's key relayed
// to a scripted model, usage and logs), a session (its sandbox run by the process provider with the
// fixture engine, cloning through the API's git gateway, prompted, stopped), change request open/edit/request-changes/close/reopen/merge from that
// session, API tokens, the project's deletion. Any
// call the chart forgot is a 403 and fails the test; removing one verb from the chart shows it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { adminKubeconfig, kubeconfigYaml, startLocalCluster, type LocalCluster } from '../../src/localcluster/index.js';
import { seededHost, type HostRepo, type WorkClone } from '../git/fixtures.js';
import { run, waitFor } from '../dev/util.js';
import { CHART_DIR, REPO_ROOT, helmAsync as helm } from './helm.js';
import { buildArtifacts } from '../daemon/harness.js';
import { startModelServer, type ModelServer } from '../fixtures/model-server.js';
import { sandboxGateway } from '../helpers/dev.js';

const RELEASE_NS = 'svc-system';
const PROJECT_NS = 'default';
const SVC = path.join(REPO_ROOT, 'bin/svc.js');

let tmp: string;
let cluster: LocalCluster;
let admin: string;
const sa: Record<'operator' | 'api', string> = { operator: '', api: '' };
let host: HostRepo;
let work: WorkClone;
let apiUrl: string;
let token: string;
let model: ModelServer;
const processes: { name: string; child: ChildProcess; output: string }[] = [];

const kubectl = (kubeconfig: string, ...args: string[]) => run('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', path.join(tmp, 'kcache'), ...args], { ...process.env, HOME: tmp });
const kubectlOk = async (kubeconfig: string, ...args: string[]) => {
  const r = await kubectl(kubeconfig, ...args);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return r.stdout;
};

function start(name: string, script: string, env: Record<string, string>, ready: RegExp): Promise<string> {
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'dist/src/main', script)], {
    env: { PATH: process.env.PATH, HOME: tmp, SVC_ALLOW_LOCAL_REPOS: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const entry = { name, child, output: '' };
  processes.push(entry);
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      entry.output += chunk.toString();
      const m = ready.exec(entry.output);
      if (m) resolve(m[1] ?? '');
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${name} exited (${code}):\n${entry.output}`)));
  });
}

async function api(method: string, urlPath: string, body?: unknown, bearer = token) {
  const headers: Record<string, string> = { authorization: `Bearer ${bearer}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(apiUrl + urlPath, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as Record<string, any> };
}

/** Every refusal the two processes met (a Kubernetes 403 is logged or surfaces as an error). */
/** A log line's message: the components log one JSON object per line (src/lib/log.ts). */
const message = (line: string): string => {
  try { return String((JSON.parse(line) as { msg?: unknown }).msg ?? line); } catch { return line; }
};
const forbidden = () => processes.flatMap((p) => p.output.split('\n').filter((l) => /forbidden/i.test(l)).map((l) => `[${p.name}] ${message(l)}`));

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'svc-rbac-journey-'));
  cluster = await startLocalCluster({ dataDir: path.join(tmp, 'cluster'), port: 0, authorization: true });
  admin = path.join(tmp, 'admin.kubeconfig');
  writeFileSync(admin, adminKubeconfig(cluster), { mode: 0o600 });
  const install = await helm(['install', 'svc', CHART_DIR, '--kubeconfig', admin, '--namespace', RELEASE_NS, '--create-namespace'], path.join(tmp, 'helm'));
  expect(install.stderr).toBe('');
  expect(install.status).toBe(0);
  for (const role of ['operator', 'api'] as const) {
    const saToken = (await kubectlOk(admin, '-n', RELEASE_NS, 'create', 'token', `svc-${role}`, '--duration', '2h')).trim();
    sa[role] = path.join(tmp, `${role}.kubeconfig`);
    writeFileSync(sa[role], kubeconfigYaml(cluster.url, { ca: cluster.ca, token: saToken, namespace: RELEASE_NS, user: `svc-${role}` }), { mode: 0o600 });
  }
  model = await startModelServer();
  ({ host, work } = seededHost());
  work.write('svc.yaml', 'svc_version: 2\ndefault_agent: coder\nagents:\n  coder: {}\ntriggers:\n  - slug: nightly\n    type: cron\n    cron: "0 0 3 * * *"\n    prompt: check\n').commit('manifest');
  work.push('main');
  work.branch('feature', { 'feature.txt': 'new\n' }, { from: 'main' });
  // the chart's own settings, with ServiceAccount kubeconfigs instead of in-cluster config
  const common = { SVC_NAMESPACE: RELEASE_NS, SVC_PROJECT_NAMESPACE: PROJECT_NS, SVC_HTTP_HOST: '127.0.0.1', SVC_HTTP_PORT: '0' };
  // the API also listens where isolated sandboxes reach the host (docs/sandboxes.md), as under svc dev
  const gateway = await sandboxGateway();
  apiUrl = `http://127.0.0.1:${await start('api', 'api.js', { ...common, KUBECONFIG: sa.api, SVC_POD_NAME: 'svc-api-0', SVC_MIRROR_DIR: path.join(tmp, 'api-mirrors'), SVC_HTTP_SANDBOX_HOST: gateway }, /listening on http:\/\/127\.0\.0\.1:(\d+)/)}/v1`;
  const sandboxApiUrl = `${await waitFor('the API listening for sandboxes', async () => /listening for sandboxes on (http:\/\/[^\s"]+)/.exec(processes.find((p) => p.name === 'api')!.output)?.[1])}/v1`;
  await waitFor('api ready', async () => (await fetch(apiUrl.replace(/\/v1$/, '/readyz'))).ok);
  const { fixtureEngine } = await buildArtifacts();
  await start('operator', 'operator.js', {
    ...common, KUBECONFIG: sa.operator, SVC_POD_NAME: 'svc-operator-0', SVC_MIRROR_DIR: path.join(tmp, 'op-mirrors'), SVC_PROJECT_RESYNC_SECONDS: '2',
    // sessions: the process provider runs svc-agent jailed with the fixture engine (shown read-only);
    // it clones through the API's git gateway, at the gateway address
    SVC_SANDBOX_PROVIDER: 'process', SVC_SANDBOX_API_URL: sandboxApiUrl, SVC_SANDBOX_DIR: path.join(tmp, 'sandboxes'),
    SVC_ENGINE_COMMAND: `'${process.execPath}' '${fixtureEngine}' --port {port}`,
    SVC_SANDBOX_MOUNTS: JSON.stringify([{ path: path.dirname(fixtureEngine), writable: false }]),
  }, /(health on port \d+)/);
  // the first API token, minted by the admin's kubeconfig (svc tokens)
  const minted = await run(process.execPath, [SVC, 'tokens', 'create', '--name', 'journey', '--write', '--capability', '*', '-n', RELEASE_NS, '--project-namespace', PROJECT_NS, '--json'], { ...process.env, KUBECONFIG: admin, HOME: tmp });
  expect(minted.stderr).toBe('');
  token = JSON.parse(minted.stdout).value;
}, 120_000);

afterAll(async () => {
  for (const p of processes) {
    if (p.child.exitCode === null && p.child.signalCode === null) {
      const exited = new Promise((r) => p.child.once('exit', r));
      p.child.kill('SIGTERM');
      await exited;
    }
  }
  await cluster?.close();
  await model?.close();
  host?.cleanup();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('the chart\'s RBAC runs the operator and the API as their ServiceAccounts', () => {
  let projectId: string;
  let base: string;

  it('the ServiceAccounts are not admins', async () => {
    expect((await kubectl(sa.api, 'auth', 'can-i', 'delete', 'namespaces')).stdout.trim()).toBe('no');
    expect((await kubectl(sa.operator, 'auth', 'can-i', 'list', 'secrets', '-n', PROJECT_NS)).stdout.trim()).toBe('no');
    expect((await kubectl(sa.operator, 'auth', 'can-i', 'create', 'changerequests.svc.dev', '-n', PROJECT_NS)).stdout.trim()).toBe('no');
    expect((await kubectl(sa.api, 'auth', 'can-i', 'get', 'secrets', '-n', 'kube-system')).stdout.trim()).toBe('no');
  });

  it('project: created through the API, reconciled by the operator (status, triggers, git credentials Secret)', async () => {
    await kubectlOk(admin, '-n', PROJECT_NS, 'create', 'secret', 'generic', 'journey-git', '--from-literal=username=git', '--from-literal=password=unused-for-a-path');
    const created = await api('POST', '/projects', { name: 'journey', repo_url: host.hostDir });
    expect(created.status).toBe(201);
    projectId = created.body.project.id;
    base = `/projects/${projectId}/change-requests`;
    await kubectlOk(admin, '-n', PROJECT_NS, 'patch', 'project', 'journey', '--type', 'merge', '-p', '{"spec":{"gitCredentialsSecretRef":{"name":"journey-git"}}}');
    const ready = () => kubectlOk(admin, '-n', PROJECT_NS, 'get', 'project', 'journey', '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}');
    await waitFor('project Ready', async () => (await ready()) === 'True', 30_000);
    expect((await kubectlOk(admin, '-n', PROJECT_NS, 'get', 'triggers', '-o', 'name')).trim()).toBe('trigger.svc.dev/journey-nightly');
    const shown = await waitFor('triggers in the API', async () => {
      const r = await api('GET', '/projects');
      return r.body.projects?.[0]?.triggers?.length === 1 ? r : undefined;
    });
    expect(shown.body.projects[0].name).toBe('journey');
  });

  it('project secrets: set, listed without values, removed', async () => {
    expect((await api('PUT', `/projects/${projectId}/secrets/HOOK_SECRET`, { value: 's3cret' })).status).toBe(204);
    const listed = await api('GET', `/projects/${projectId}/secrets`);
    expect(listed.status).toBe(200);
    expect(listed.body.secrets.map((x: any) => x.name)).toEqual(['HOOK_SECRET']);
    expect(JSON.stringify(listed.body)).not.toContain('s3cret');
    expect((await api('PUT', `/projects/${projectId}/secrets/OTHER`, { value: 'x' })).status).toBe(204);
    expect((await api('DELETE', `/projects/${projectId}/secrets/OTHER`)).status).toBe(204);
  });

  it('model gateway: a provider and a budget set', async () => {
    expect((await api('PUT', `/projects/${projectId}/gateway/providers/scripted`, { api_key: 'sk-journey', base_url: model.url })).status).toBe(204);
    expect((await api('GET', `/projects/${projectId}/gateway/providers`)).body.providers).toHaveLength(1);
    expect((await api('PUT', `/projects/${projectId}/gateway/budget`, { period: 'day', max_tokens: 1_000_000, max_tokens_per_session: 100_000 })).status).toBe(200);
  });

  let sessionId: string;
  it('sessions: started through the API, run by the operator (Session Secret, CLI token, Sandbox), prompted, stopped', async () => {
    const started = await api('POST', `/projects/${projectId}/sessions`, { prompt: 'hello' });
    expect(started.status).toBe(201);
    sessionId = started.body.session.id ?? started.body.session.session_id;
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
    const statusOf = async () => (await api('GET', `/projects/${projectId}/sessions/${sessionId}`)).body.session?.status;
    await waitFor('session running', async () => (await statusOf()) === 'running', 60_000);
    // the model gateway as the API's ServiceAccount: the session's key checked from its caches, the budget read, usage written
    const env = (await api('GET', `/projects/${projectId}/sessions/${sessionId}/engine/fixture/env`)).body;
    expect(env.SVC_LLM_PROVIDERS).toBe('scripted:openai');
    const relayed = await fetch(`${env.SVC_LLM_BASE_URL}/scripted/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${env.SVC_LLM_API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm1', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(relayed.status).toBe(200);
    await relayed.text();
    await waitFor('usage recorded', async () => ((await api('GET', `/projects/${projectId}/gateway/usage?group_by=session`)).body.total?.input_tokens ?? 0) >= 10);
    expect((await api('GET', `/projects/${projectId}/gateway/logs`)).status).toBe(200);
    expect((await api('GET', `/projects/${projectId}/gateway/budget`)).body.used.period_tokens).toBeGreaterThanOrEqual(15);
    expect((await api('GET', `/projects/${projectId}/sessions`)).body.sessions).toHaveLength(1);
    expect((await api('POST', `/projects/${projectId}/sessions/${sessionId}/prompt`, { text: 'more' })).status).toBe(202);
    // the session's CLI token lives with the API tokens, in the release namespace
    const cliTokens = () => kubectlOk(admin, '-n', RELEASE_NS, 'get', 'secrets', '-l', `svc.dev/session=${sessionId}`, '-o', 'name');
    expect(await cliTokens()).toMatch(/secret\/svc-token-/);
    expect((await api('POST', `/projects/${projectId}/sessions/${sessionId}/stop`)).status).toBe(200);
    await waitFor('session stopped', async () => (await statusOf()) === 'stopped', 60_000);
    // its credentials went with its sandbox: the CLI token, the Session Secret; the stopped Sandbox too (retention)
    await waitFor('the CLI token revoked', async () => (await cliTokens()) === '', 30_000);
    expect(await kubectlOk(admin, '-n', PROJECT_NS, 'get', 'secret', `svc-session-${sessionId}`, '--ignore-not-found', '-o', 'name')).toBe('');
    await waitFor('the stopped Sandbox removed', async () => (await kubectlOk(admin, '-n', PROJECT_NS, 'get', 'sandboxes', '-o', 'name')) === '', 60_000);
  });

  it('change requests: open, read, edit, request changes, close, reopen, merge', async () => {
    work.branch(sessionId, { 'session.txt': 'from the session\n' }, { from: 'feature' });
    const opened = await api('POST', base, { title: 'Add a feature', head_ref: sessionId, session_id: sessionId });
    expect(opened.status).toBe(201);
    const cr = opened.body.change_request;
    expect(cr.origin_session_id).toBe(sessionId);
    expect(cr.account_id).toMatch(/^[0-9a-f-]{36}$/); // the API may read its namespace
    const id = cr.cr_id;
    expect((await api('GET', base)).body.change_requests).toHaveLength(1);
    expect((await api('GET', `${base}/${id}`)).status).toBe(200);
    expect((await api('GET', `${base}/${id}/diff`)).body.files).toHaveLength(2);
    expect((await api('GET', `${base}/${id}/merge-preview`)).body.can_fast_forward).toBe(true);
    expect((await api('PATCH', `${base}/${id}`, { title: 'Add the feature' })).status).toBe(200);
    expect((await api('POST', `${base}/${id}/request-changes`, { feedback: 'one more test' })).status).toBe(200);
    expect((await api('POST', `${base}/${id}/close`)).body.change_request.status).toBe('closed');
    expect((await api('POST', `${base}/${id}/reopen`)).body.change_request.status).toBe('open');
    const merged = await api('POST', `${base}/${id}/merge`);
    expect(merged.status).toBe(200);
    expect(merged.body.change_request.status).toBe('merged');
    expect(host.tip('main')).toBe(merged.body.change_request.merge_commit_sha);
    const events = await kubectlOk(admin, '-n', PROJECT_NS, 'get', 'events', '-o', 'jsonpath={.items[*].reason}');
    expect(events).toContain('Merged');
    // the merge asks the operator to re-read the default branch (a Project patch); it does
    await waitFor('operator re-read main', async () => (await kubectlOk(admin, '-n', PROJECT_NS, 'get', 'project', 'journey', '-o', 'jsonpath={.status.defaultBranchSha}')) === host.tip('main'), 30_000);
  });

  it('API tokens: create, list, last use recorded, revoke', async () => {
    const created = await api('POST', '/tokens', { name: 'journey-reader', project_id: projectId });
    expect(created.status).toBe(201);
    expect((await api('GET', '/projects', undefined, created.body.value)).status).toBe(200);
    await waitFor('last use recorded', async () => (await api('GET', '/tokens')).body.tokens.find((t: any) => t.name === 'journey-reader')?.last_used_at);
    expect((await api('DELETE', '/tokens/journey-reader')).status).toBe(204);
    expect((await api('GET', '/projects', undefined, created.body.value)).status).toBe(401);
  });

  it('met no 403 on the way (nothing the chart forgot)', () => {
    expect(forbidden()).toEqual([]);
  });

  it('a verb removed from the chart is a 403: without create on changerequests the API cannot open one', async () => {
    const chart = path.join(tmp, 'chart');
    cpSync(CHART_DIR, chart, { recursive: true });
    const rbac = path.join(chart, 'templates/rbac.yaml');
    const text = readFileSync(rbac, 'utf8');
    const narrowed = text.replace(/(resources: \["changerequests"\]\n\s+verbs: \[)([^\]]*)\]/, (_all, head: string, verbs: string) => `${head}${verbs.split(', ').filter((v) => v !== '"create"').join(', ')}]`);
    expect(narrowed).not.toBe(text);
    writeFileSync(rbac, narrowed);
    const upgrade = await helm(['upgrade', 'svc', chart, '--kubeconfig', admin, '--namespace', RELEASE_NS], path.join(tmp, 'helm'));
    expect(upgrade.status).toBe(0);

    expect((await kubectl(sa.api, 'auth', 'can-i', 'create', 'changerequests.svc.dev', '-n', PROJECT_NS)).stdout.trim()).toBe('no');
    work.branch('feature-2', { 'two.txt': '2\n' }, { from: 'main' });
    const refused = await api('POST', base, { title: 'Refused', head_ref: 'feature-2' });
    expect(refused.status).toBeGreaterThanOrEqual(500);
    expect(forbidden().join('\n')).toContain('changerequests.svc.dev is forbidden: User "system:serviceaccount:svc-system:svc-api" cannot create resource "changerequests" in API group "svc.dev" in the namespace "default"');
    // the same call straight to the cluster with the API's token: the real 403 Status
    const direct = await run('kubectl', ['--kubeconfig', sa.api, '-n', PROJECT_NS, 'create', '-f', '-'], { ...process.env, HOME: tmp },
      JSON.stringify({ apiVersion: 'svc.dev/v1alpha1', kind: 'ChangeRequest', metadata: { name: 'x' }, spec: {} }));
    expect(direct.stderr).toContain('Error from server (Forbidden)');
  });

  it('project: deleted through the API, let go by the operator once its sessions are gone', async () => {
    expect((await api('DELETE', `/projects/${projectId}`)).status).toBe(204);
    await waitFor('the project gone', async () => (await kubectl(admin, '-n', PROJECT_NS, 'get', 'project', 'journey', '-o', 'name')).code !== 0, 60_000);
    expect((await kubectlOk(admin, '-n', PROJECT_NS, 'get', 'sessions', '-o', 'name')).trim()).toBe('');
    // the only refusal met is the one the test before caused on purpose
    expect(forbidden().filter((line) => !line.includes('changerequests'))).toEqual([]);
  });
});
