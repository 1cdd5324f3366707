// Acceptance of issue 3 §6/§7: `svc dev` on temporary ports and dir, driven with the real
// kubectl, curl-like REST calls and the svc CLI, and restarted on the same dir.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { REPO_ROOT, removeDevDir, startDev, type DevInstance } from '../helpers/dev.js';
import { mintToken } from '../../src/api/tokens.js';
import { commitFiles, makeRepo, manifestWithTriggers, run, runOk, waitFor } from './util.js';
import { startGitHttpServer } from '../helpers/git-http-server.js';

const SVC = path.join(REPO_ROOT, 'bin/svc.js');
let tmp: string;
let repo: string;
let dev: DevInstance;

const kubectl = (...args: string[]) => runOk('kubectl', args, dev.env);
const svc = (...args: string[]) => run(process.execPath, [SVC, ...args], dev.env);
const readyOf = (name: string) => kubectl('get', 'project', name, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}');

async function api(method: string, urlPath: string, token: string | null, body?: unknown) {
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(dev.apiUrl + urlPath, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> & { error?: string } };
}

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'svc-dev-accept-'));
  repo = path.join(tmp, 'repo');
  makeRepo(repo, { 'svc.yaml': manifestWithTriggers(), 'README.md': '# example\n' });
  dev = await startDev({ dataDir: path.join(tmp, 'dev') });
}, 90_000);

afterAll(async () => {
  await dev?.stop();
  removeDevDir(tmp);
});

describe('svc dev', () => {
  it('writes a private kubeconfig and env with the API URL and an admin token', () => {
    expect(statSync(dev.kubeconfig).mode & 0o777).toBe(0o600);
    expect(statSync(path.join(dev.dataDir, 'env')).mode & 0o777).toBe(0o600);
    expect(dev.apiUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    expect(dev.token).toMatch(/^svc_/);
    expect(dev.output()).toContain(`source ${path.join(dev.dataDir, 'env')}`);
  });

  it('keeps its surfaces on loopback: the API refuses a foreign Host, the operator health port and cluster journal are private', async () => {
    const api = new URL(dev.apiUrl);
    const status = (host: string) => new Promise<number>((resolve, reject) => {
      http.get({ host: '127.0.0.1', port: api.port, path: '/healthz', headers: { host } }, (res) => { res.resume(); resolve(res.statusCode!); }).on('error', reject);
    });
    expect(await status(`evil.example:${api.port}`)).toBe(403);
    expect(await status(`localhost:${api.port}`)).toBe(200);
    // the operator starts after the API: wait for its line
    const healthPort = await waitFor('the operator health port', async () => Number(/health on port (\d+) of 127\.0\.0\.1/.exec(dev.output())?.[1]) || undefined);
    const external = Object.values(os.networkInterfaces()).flat().find((i) => i && i.family === 'IPv4' && !i.internal)?.address;
    const connects = (host: string) => new Promise<boolean>((resolve) => {
      const socket = net.connect({ host, port: healthPort });
      socket.once('connect', () => { socket.destroy(); resolve(true); });
      socket.once('error', () => resolve(false));
    });
    expect(await connects('127.0.0.1')).toBe(true);
    if (external) expect(await connects(external)).toBe(false);
    expect(statSync(path.join(dev.dataDir, 'cluster')).mode & 0o777).toBe(0o700);
    expect(statSync(path.join(dev.dataDir, 'cluster', 'journal.ndjson')).mode & 0o777).toBe(0o600);
  });

  it('kubectl get crds lists the six svc.dev CRDs', async () => {
    const names = (await kubectl('get', 'crds', '-o', 'name')).trim().split('\n').filter((n) => n.endsWith('.svc.dev')).sort();
    expect(names).toEqual(['changerequests', 'projects', 'sandboxes', 'sessions', 'triggerfires', 'triggers'].map((p) => `customresourcedefinition.apiextensions.k8s.io/${p}.svc.dev`));
  });

  it('kubectl apply of examples/project.yaml gives a Ready project and the two valid triggers', async () => {
    const manifest = readFileSync(path.join(REPO_ROOT, 'examples/project.yaml'), 'utf8').replace('repoUrl: REPO_URL', `repoUrl: ${repo}`);
    expect(await runOk('kubectl', ['apply', '-f', '-'], dev.env, manifest)).toContain('project.svc.dev/example created');
    await waitFor('project example Ready', async () => (await readyOf('example')) === 'True');
    const table = await kubectl('get', 'projects');
    expect(table.split('\n')[0]).toMatch(/NAME\s+READY\s+BRANCH\s+MANIFEST\s+TRIGGERS/);
    // MANIFEST: validity and version (one trigger entry is invalid); TRIGGERS: a count
    expect(table).toMatch(/example\s+True\s+main\s+invalid \(v2\)\s+2\s/);
    expect((await kubectl('get', 'triggers', '-o', 'name')).trim().split('\n').sort()).toEqual(['trigger.svc.dev/example-nightly', 'trigger.svc.dev/example-on-push']);
    const triggers = await kubectl('get', 'triggers');
    expect(triggers).toMatch(/example-nightly\s+cron\s+0 0 3 \* \* \*/);
    expect(triggers).toMatch(/example-on-push\s+webhook/);
  });

  it('a pushed trigger plus the refresh annotation appears, and kubectl get projects -w streams the change', async () => {
    const watch = spawn('kubectl', ['get', 'projects', '-w', '-o', 'custom-columns=NAME:.metadata.name,SHA:.status.defaultBranchSha,TRIGGERS:.status.triggers'], { env: dev.env });
    let streamed = '';
    watch.stdout.on('data', (c: Buffer) => { streamed += c.toString(); });
    try {
      await waitFor('the watch to print the current state', async () => streamed.includes('example'));
      const sha = commitFiles(repo, { 'svc.yaml': manifestWithTriggers('  - slug: weekly\n    type: cron\n    cron: "0 0 4 * * 1"\n    prompt: weekly report\n') }, 'add weekly');
      await kubectl('annotate', 'project', 'example', `svc.dev/refresh=${Date.now()}`, '--overwrite');
      await waitFor('trigger example-weekly', async () => (await kubectl('get', 'triggers', '-o', 'name')).includes('trigger.svc.dev/example-weekly'));
      expect(JSON.parse(await kubectl('get', 'trigger', 'example-weekly', '-o', 'jsonpath={.spec}'))).toMatchObject({ slug: 'weekly', cron: '0 0 4 * * 1', projectRef: { name: 'example' } });
      await waitFor('the watch to stream the new tip', async () => streamed.includes(sha));
      expect(streamed).toMatch(new RegExp(`example\\s+${sha}\\s+.*weekly`));
      const annotation = await kubectl('get', 'project', 'example', '-o', 'jsonpath={.metadata.annotations.svc\\.dev/refresh}');
      expect(await kubectl('get', 'project', 'example', '-o', 'jsonpath={.status.lastRefreshToken}')).toBe(annotation);
    } finally {
      watch.kill();
    }
  });

  it('kubectl describe project shows conditions and Events a person can act on', async () => {
    const described = await kubectl('describe', 'project', 'example');
    expect(described).toContain('Conditions:');
    for (const type of ['Ready', 'RepositoryReachable', 'ManifestValid']) expect(described).toContain(`Type:                  ${type}`);
    expect(described).toContain('InvalidTriggerEntries');
    expect(described).toMatch(/Events:[\s\S]*TriggersSynced[\s\S]*created example-weekly/);
    expect(described).toMatch(/Warning\s+InvalidTriggers/);
  });

  it('serves the project routes with 401, 403, 400, 404 and the serialized project', async () => {
    expect((await api('GET', '/projects', null)).status).toBe(401);
    expect(await api('GET', '/projects', 'svc_not-a-real-token')).toEqual({ status: 401, body: { error: 'unknown or revoked token: use a current one (a cluster admin makes one with `svc tokens create`; under `svc dev`, `source .svc-dev/env` gives its admin token)' } });
    const reader = mintToken({ userId: randomUUID(), access: 'read', capabilities: [] }, 'default');
    await runOk('kubectl', ['apply', '-f', '-'], dev.env, JSON.stringify(reader.secret));
    const forbidden = await api('POST', '/projects', reader.token, { name: 'nope', repo_url: repo });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error).toContain('read access only');
    const bad = await api('POST', '/projects', dev.token, { name: 'Not_A_Label', repo_url: '' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain('DNS-1123');
    expect(bad.body.error).toContain('repo_url is required');
    expect((await api('GET', '/projects/not-a-uuid', reader.token)).status).toBe(400);
    expect((await api('GET', `/projects/${randomUUID()}`, reader.token)).status).toBe(404);
    expect((await kubectl('get', 'projects', '-o', 'name')).trim().split('\n')).toEqual(['project.svc.dev/example']);

    const list = await api('GET', '/projects', reader.token);
    const [project] = list.body.projects as Record<string, unknown>[];
    const uid = await kubectl('get', 'project', 'example', '-o', 'jsonpath={.metadata.uid}');
    expect(project).toMatchObject({
      id: uid, name: 'example', namespace: 'default', repo_url: repo, default_branch: 'main', description: 'An example project',
      manifest: { file: 'svc.yaml', version: 2 },
      trigger_errors: [{ index: 2, slug: 'Broken' }],
    });
    expect((project!.triggers as { slug: string }[]).map((t) => t.slug)).toEqual(['nightly', 'on-push', 'weekly']);
    const shown = await api('GET', `/projects/${uid}`, reader.token);
    expect(shown.status).toBe(200);
    expect(shown.body.project).toEqual(project);
  });

  it('svc projects create|ls|show work through the REST API', async () => {
    const created = await svc('projects', 'create', 'web', '--repo', repo, '--json');
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    const project = JSON.parse(created.stdout) as { id: string; name: string; repo_url: string };
    expect(project).toMatchObject({ name: 'web', repo_url: repo });
    await waitFor('project web Ready', async () => (await readyOf('web')) === 'True');
    const ls = await svc('projects', 'ls');
    expect(ls.stdout).toMatch(/^NAME\s+ID\s+READY/);
    expect(ls.stdout).toMatch(/example\s+\S+\s+True/);
    expect(ls.stdout).toMatch(new RegExp(`web\\s+${project.id}\\s+True\\s+main\\s+svc.yaml`));
    const shown = await svc('projects', 'show', project.id);
    expect(shown.stdout).toContain('Ready=True Synced');
    expect(shown.stdout).toContain('nightly  cron  0 0 3 * * *');
    const duplicate = await svc('projects', 'create', 'web', '--repo', repo);
    expect(duplicate.code).not.toBe(0);
    expect(duplicate.stderr).toContain('project web already exists');
    const noToken = await run(process.execPath, [SVC, 'projects', 'ls'], { ...dev.env, SVC_CLI_TOKEN: '', SVC_EXECUTOR_TOKEN: '' });
    expect(noToken.code).not.toBe(0);
    expect(noToken.stderr).toContain('SVC_CLI_TOKEN');
  });

  it('started again on the same dir, comes back with every resource and the same token', async () => {
    const token = dev.token;
    expect(await dev.stop()).toBe(0);
    expect(dev.output()).toContain('svc dev: stopped');
    dev = await startDev({ dataDir: dev.dataDir });
    expect(dev.token).toBe(token);
    expect((await kubectl('get', 'projects', '-o', 'name')).trim().split('\n').sort()).toEqual(['project.svc.dev/example', 'project.svc.dev/web']);
    expect((await kubectl('get', 'triggers', '-o', 'name')).trim().split('\n')).toHaveLength(6);
    const list = await api('GET', '/projects', token);
    expect(list.status).toBe(200);
    expect((list.body.projects as { name: string }[]).map((p) => p.name)).toEqual(['example', 'web']);
  }, 90_000);

  it('kubectl delete project removes its triggers and the git mirrors of the operator and the API', async () => {
    const uid = (await kubectl('get', 'project', 'web', '-o', 'jsonpath={.metadata.uid}')).trim();
    await runOk('git', ['-C', repo, 'checkout', '-q', '-b', 'feature']);
    commitFiles(repo, { 'feature.txt': 'f\n' }, 'feature work');
    await runOk('git', ['-C', repo, 'checkout', '-q', 'main']);
    const opened = await api('POST', `/projects/${uid}/change-requests`, dev.token, { title: 'feature', head_ref: 'feature', base_ref: 'main' });
    expect(opened.status).toBe(201);
    const mirrors = [path.join(dev.dataDir, 'mirrors', `${uid}.git`), path.join(dev.dataDir, 'api-mirrors', `${uid}.git`)];
    for (const dir of mirrors) expect(existsSync(dir), dir).toBe(true);
    const exampleMirror = path.join(dev.dataDir, 'mirrors', `${(await kubectl('get', 'project', 'example', '-o', 'jsonpath={.metadata.uid}')).trim()}.git`);

    await kubectl('delete', 'project', 'web');
    await waitFor('the mirrors of web removed', async () => mirrors.every((dir) => !existsSync(dir)));
    await waitFor('the triggers of web collected', async () => !(await kubectl('get', 'triggers', '-o', 'name')).includes('web-'));
    expect(existsSync(exampleMirror)).toBe(true);
  }, 60_000);

  it('a manifest of 50,000 bad trigger entries: the Project keeps the first 100, counts them all and stays usable', async () => {
    // 7 MB of errors before: the status write was refused (too large) and retried without end
    const bulk = path.join(tmp, 'bulk');
    makeRepo(bulk, { 'svc.yaml': manifestWithTriggers('  - {}\n'.repeat(50_000)) });
    await runOk('kubectl', ['apply', '-f', '-'], dev.env, `apiVersion: svc.dev/v1alpha1\nkind: Project\nmetadata:\n  name: bulk\nspec:\n  repoUrl: ${bulk}\n`);
    try {
      const status = await waitFor('the bulk project read', async () => {
        const s = JSON.parse(await kubectl('get', 'project', 'bulk', '-o', 'jsonpath={.status}') || '{}') as { triggerErrors?: { index: number }[]; triggerErrorCount?: number; conditions?: { type: string; status: string; reason: string; message: string }[] };
        return s.conditions?.some((c) => c.type === 'ManifestValid' && c.reason === 'InvalidTriggerEntries') && s;
      }, 60_000);
      expect(status.triggerErrorCount).toBe(50_001);
      expect(status.triggerErrors!.map((e) => e.index)).toEqual(Array.from({ length: 100 }, (_, i) => i + 2));
      expect(status.conditions!.find((c) => c.type === 'Ready')).toMatchObject({ status: 'True' });
      expect(status.conditions!.find((c) => c.type === 'ManifestValid')!.message).toMatch(/valid except 50001 trigger entries \(#2 \(Broken\), #3, .*#11, and 49991 more\), skipped; status\.triggerErrors lists the first 100/);
      const listed = await api('GET', `/projects/${(await kubectl('get', 'project', 'bulk', '-o', 'jsonpath={.metadata.uid}')).trim()}/triggers`, dev.token);
      expect(listed.status).toBe(200);
      expect(listed.body.errors).toHaveLength(100);
    } finally {
      await kubectl('delete', 'project', 'bulk', '--ignore-not-found');
    }
  }, 90_000);

  it('the merge preview and the merge gate check a heavy manifest on the branch off the API thread and list the first 100 issues', async () => {
    const uid = (await kubectl('get', 'project', 'example', '-o', 'jsonpath={.metadata.uid}')).trim();
    await runOk('git', ['-C', repo, 'checkout', '-q', '-b', 'heavy-manifest']);
    commitFiles(repo, { 'svc.yaml': manifestWithTriggers('  - {}\n'.repeat(30_000)) }, 'thirty thousand empty triggers');
    await runOk('git', ['-C', repo, 'checkout', '-q', 'main']);
    const opened = await api('POST', `/projects/${uid}/change-requests`, dev.token, { title: 'heavy', head_ref: 'heavy-manifest', base_ref: 'main' });
    expect(opened.status).toBe(201);
    const cr = (opened.body.change_request as { cr_id: string }).cr_id;
    const preview = await api('GET', `/projects/${uid}/change-requests/${cr}/merge-preview`, dev.token);
    expect(preview.status).toBe(200);
    const issues = preview.body.manifest_issues as { path: string; message: string }[];
    expect(issues).toHaveLength(101);
    expect(issues[0]).toEqual({ path: '/triggers/2/slug', message: expect.stringContaining('must match') });
    expect(issues[100]!.message).toMatch(/^and \d+ more like these \(the first 100 are listed\)$/);
    const merge = await api('POST', `/projects/${uid}/change-requests/${cr}/merge`, dev.token, {});
    expect(merge.status).toBe(422);
    expect(merge.body).toMatchObject({ code: 'MANIFEST_INVALID' });
    await api('POST', `/projects/${uid}/change-requests/${cr}/close`, dev.token, {});
  }, 60_000);

  it('a private repository over HTTP: a missing Secret, then a wrong password, then the right one', async () => {
    const root = path.join(tmp, 'git-host');
    await runOk('git', ['clone', '--quiet', '--bare', repo, path.join(root, 'private.git')]);
    const password = 'pw-correct-horse-battery';
    const server = await startGitHttpServer({ root, auth: { username: 'bot', password } });
    const condition = async (type: string) => JSON.parse(await kubectl('get', 'project', 'private', '-o', `jsonpath={.status.conditions[?(@.type=="${type}")]}`) || '{}') as { status?: string; reason?: string; message?: string };
    const refresh = () => kubectl('annotate', 'project', 'private', `svc.dev/refresh=${randomUUID()}`, '--overwrite');
    const secret = (pw: string) => runOk('kubectl', ['create', 'secret', 'generic', 'private-git', '--from-literal=username=bot', `--from-literal=password=${pw}`, '--dry-run=client', '-o', 'yaml'], dev.env)
      .then((yaml) => runOk('kubectl', ['apply', '-f', '-'], dev.env, yaml));
    try {
      const project = `apiVersion: svc.dev/v1alpha1\nkind: Project\nmetadata:\n  name: private\nspec:\n  repoUrl: ${server.url}/private.git\n  gitCredentialsSecretRef:\n    name: private-git\n`;
      await runOk('kubectl', ['apply', '-f', '-'], dev.env, project);
      const missing = await waitFor('CredentialsNotFound', async () => { const c = await condition('RepositoryReachable'); return c.reason === 'CredentialsNotFound' && c; });
      expect(missing).toMatchObject({ status: 'False', message: 'the git credentials Secret private-git does not exist in namespace default' });

      await secret('wrong-password-xyz');
      await refresh();
      // its own reason and git's words (issue 23: it was FetchFailed with the first fatal line)
      const refused = await waitFor('AuthenticationFailed', async () => { const c = await condition('RepositoryReachable'); return c.reason === 'AuthenticationFailed' && c; });
      expect(refused.status).toBe('False');
      expect(refused.message).toMatch(/Authentication failed for .*\(the host refused the credentials\)/);
      expect(refused.message).toContain(`${server.url}/private.git`);
      expect(await kubectl('get', 'project', 'private', '-o', 'yaml')).not.toContain('wrong-password-xyz');

      await secret(password);
      await refresh();
      await waitFor('project private Ready', async () => (await readyOf('private')) === 'True');
      expect((await kubectl('get', 'triggers', '-o', 'name')).split('\n')).toContain('trigger.svc.dev/private-nightly');
      expect(server.requests.some((r) => r.user === 'bot')).toBe(true);
      expect(await kubectl('describe', 'project', 'private')).not.toContain(password);
    } finally {
      await kubectl('delete', 'project', 'private', '--ignore-not-found');
      await server.close();
    }
  }, 60_000);
});
