// Issue 14 §2: `svc tokens` (the built CLI, an admin's kubeconfig) against `svc dev`, and the
// /v1/tokens routes: a created token works within its scope, is refused beyond it, expires, is
// revoked; a caller never hands out more than it holds; no token value is ever listed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT, removeDevDir, startDev, type DevInstance } from '../helpers/dev.js';
import { makeRepo, run, waitFor } from '../dev/util.js';

const SVC = path.join(REPO_ROOT, 'bin/svc.js');
let tmp: string;
let dev: DevInstance;
let projectId: string;
let otherProjectId: string;

/** The CLI as the admin runs it: KUBECONFIG, no API token. */
const svc = (...args: string[]) => {
  const { SVC_CLI_TOKEN: _t, SVC_API_URL: _u, ...env } = dev.env;
  return run(process.execPath, [SVC, ...args], { ...env, NO_COLOR: '1' });
};
const svcJson = async <T>(...args: string[]): Promise<T> => {
  const r = await svc(...args, '--json');
  if (r.code !== 0) throw new Error(`svc ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
};

async function api(method: string, urlPath: string, token: string, body?: unknown) {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(dev.apiUrl + urlPath, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
}

interface Created { token: { name: string; access: string; project: string | null; project_id: string | null; capabilities: string[]; expires_at: string | null }; value: string }

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'svc-tokens-'));
  makeRepo(path.join(tmp, 'repo'), { 'README.md': '# tokens\n' });
  dev = await startDev({ dataDir: path.join(tmp, 'dev') });
  for (const name of ['alpha', 'beta']) {
    const created = await api('POST', '/projects', dev.token, { name, repo_url: path.join(tmp, 'repo') });
    expect(created.status).toBe(201);
  }
  const listed = await api('GET', '/projects', dev.token);
  const idOf = (name: string) => (listed.body.projects as { name: string; id: string }[]).find((p) => p.name === name)!.id;
  projectId = idOf('alpha');
  otherProjectId = idOf('beta');
}, 90_000);

afterAll(async () => {
  await dev?.stop();
  if (tmp) removeDevDir(tmp);
});

describe('svc tokens (admin, kubeconfig)', () => {
  it('creates a project-scoped read token, printed once, that reads its project only', async () => {
    const text = await svc('tokens', 'create', '--name', 'alpha-reader', '--project', 'alpha');
    expect(text.code).toBe(0);
    const value = /^(svc_[A-Za-z0-9_-]{43})$/m.exec(text.stdout)?.[1];
    expect(value).toBeDefined();
    expect(text.stdout).toContain('read access, alpha');
    expect(text.stdout).toContain('not shown again');

    const listed = await api('GET', '/projects', value!);
    expect(listed.status).toBe(200);
    expect((listed.body.projects as { name: string }[]).map((p) => p.name)).toEqual(['alpha']);
    expect((await api('POST', '/projects', value!, { name: 'nope', repo_url: '/x' })).status).toBe(403);
    expect((await api('GET', `/projects/${otherProjectId}/change-requests`, value!)).status).toBe(403);
    expect((await api('POST', `/projects/${projectId}/change-requests`, value!, { title: 't', head_ref: 'x' })).status).toBe(403);
  });

  it('ls shows names, scopes, expiry and last use, never a value; --json too', async () => {
    const created = await svcJson<Created>('tokens', 'create', '--name', 'used-once', '--write', '--capability', 'project.gitops.push', '--expires', '30d');
    expect(created.token).toMatchObject({ name: 'used-once', access: 'write', project: null, project_id: null, capabilities: ['project.gitops.push'] });
    expect(Date.parse(created.token.expires_at!) - Date.now()).toBeGreaterThan(29 * 86_400_000);
    expect((await api('GET', '/projects', created.value)).status).toBe(200);
    const { tokens } = await waitFor('last use recorded', async () => {
      const list = await svcJson<{ tokens: { name: string; last_used_at: string | null }[] }>('tokens', 'ls');
      return list.tokens.find((t) => t.name === 'used-once')?.last_used_at ? list : undefined;
    });
    expect(tokens.map((t) => t.name)).toEqual(expect.arrayContaining(['alpha-reader', 'used-once']));
    const table = await svc('tokens', 'ls');
    expect(table.stdout.split('\n')[0]).toMatch(/^NAME\s+ACCESS\s+PROJECT\s+CAPABILITIES\s+EXPIRES\s+LAST USED$/);
    expect(table.stdout).toMatch(/alpha-reader\s+read\s+alpha\s+-\s+never\s+/);
    for (const out of [table.stdout, JSON.stringify(tokens)]) {
      expect(out).not.toContain(created.value);
      expect(out).not.toMatch(/svc_[A-Za-z0-9_-]{43}/);
    }
  });

  it('an expired token is 401 saying it expired, to the CLI that uses it too', async () => {
    const created = await svcJson<Created>('tokens', 'create', '--name', 'short-lived', '--expires', '2s');
    expect((await api('GET', '/projects', created.value)).status).toBe(200);
    await waitFor('expiry', async () => (await api('GET', '/projects', created.value)).status === 401, 10_000);
    const said = `token short-lived expired at ${created.token.expires_at}: a cluster admin makes a new one with \`svc tokens create\``;
    expect((await api('GET', '/projects', created.value)).body).toEqual({ error: said });
    const cli = await run(process.execPath, [SVC, 'projects', 'ls'], { ...dev.env, SVC_CLI_TOKEN: created.value, NO_COLOR: '1' });
    expect(cli.code).toBe(1);
    expect(cli.stderr).toContain(said);
    const list = await svcJson<{ tokens: { name: string; expired: boolean }[] }>('tokens', 'ls');
    expect(list.tokens.find((t) => t.name === 'short-lived')?.expired).toBe(true);
  });

  it('revoke: the token is 401 at once; an unknown name is a clear error', async () => {
    const created = await svcJson<Created>('tokens', 'create', '--name', 'to-revoke');
    expect((await api('GET', '/projects', created.value)).status).toBe(200);
    const revoked = await svc('tokens', 'revoke', 'to-revoke');
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toContain('Token to-revoke revoked.');
    expect((await api('GET', '/projects', created.value)).status).toBe(401);
    const unknown = await svc('tokens', 'revoke', 'to-revoke');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no token named to-revoke');
  });

  it('refuses bad input with a clear error and writes nothing', async () => {
    const before = (await svcJson<{ tokens: unknown[] }>('tokens', 'ls')).tokens.length;
    const cases: [string[], RegExp][] = [
      [['--name', 'alpha-reader'], /a token named alpha-reader already exists/],
      [['--name', 'Bad Name'], /lower-case/],
      [['--name', 'x', '--capability', 'project.fly'], /unknown capability project.fly/],
      [['--name', 'x', '--expires', '30days'], /--expires "30days" is not a duration/],
      [['--name', 'x', '--project', 'gamma'], /no project gamma in namespace default/],
    ];
    for (const [args, message] of cases) {
      const r = await svc('tokens', 'create', ...args);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr).toMatch(message);
    }
    expect((await svcJson<{ tokens: unknown[] }>('tokens', 'ls')).tokens.length).toBe(before);
    const noCluster = await run(process.execPath, [SVC, 'tokens', 'ls'], { PATH: process.env.PATH, HOME: tmp, KUBECONFIG: path.join(tmp, 'missing') });
    expect(noCluster.code).not.toBe(0);
    expect(noCluster.stderr).toMatch(/kubeconfig/);
  });
});

describe('/v1/tokens', () => {
  let manager: string;
  beforeAll(async () => {
    manager = (await svcJson<Created>('tokens', 'create', '--name', 'alpha-manager', '--write', '--project', 'alpha',
      '--capability', 'project.members.manage', '--capability', 'project.members.read', '--capability', 'project.gitops.push', '--expires', '7d')).value;
  });

  it('a manager mints a token for its project, no wider than its own; the token works and is listed without its value', async () => {
    const created = await api('POST', '/tokens', manager, { name: 'alpha-ci', access: 'write', capabilities: ['project.gitops.push'], expires_in: '1d' });
    expect(created.status).toBe(201);
    expect(created.body.token).toMatchObject({ name: 'alpha-ci', access: 'write', project_id: projectId, capabilities: ['project.gitops.push'], expired: false, last_used_at: null });
    expect(created.body.value).toMatch(/^svc_/);
    expect((await api('GET', `/projects/${projectId}/change-requests`, created.body.value)).status).toBe(200);
    expect((await api('GET', `/projects/${otherProjectId}/change-requests`, created.body.value)).status).toBe(403);

    const wider: [Record<string, unknown>, RegExp][] = [
      [{ name: 'w1', project_id: otherProjectId }, /scoped to another project/],
      [{ name: 'w2', project_id: null }, /must be too/],
      [{ name: 'w3', capabilities: ['project.gitops.merge'] }, /lacks project.gitops.merge/],
      [{ name: 'w4', capabilities: ['*'] }, /lacks \*/],
      [{ name: 'w5', expires_in: '30d' }, /expires at/],
    ];
    for (const [body, message] of wider) {
      const res = await api('POST', '/tokens', manager, body);
      expect(res.status, JSON.stringify(body)).toBe(403);
      expect(res.body.error).toMatch(message);
    }
    expect((await api('POST', '/tokens', manager, { name: 'alpha-ci' })).status).toBe(409);
    expect((await api('POST', '/tokens', manager, { name: 'x', access: 'root' })).status).toBe(400);

    const listed = await api('GET', '/tokens', manager);
    expect(listed.status).toBe(200);
    const names = (listed.body.tokens as { name: string; project_id: string }[]).map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['alpha-ci', 'alpha-manager', 'alpha-reader']));
    expect(names).not.toContain('used-once'); // not of its project
    expect(JSON.stringify(listed.body)).not.toMatch(/svc_[A-Za-z0-9_-]{43}/);
    expect(Object.keys(listed.body.tokens[0]).sort()).toEqual(['access', 'capabilities', 'created_at', 'created_by', 'expired', 'expires_at', 'last_used_at', 'name', 'project_id', 'user_id']);
  });

  it('DELETE revokes a token of its project (204, then 401); others are 404; a token without members.manage is 403', async () => {
    const minted = await api('POST', '/tokens', manager, { name: 'alpha-temp' });
    expect((await api('DELETE', '/tokens/used-once', manager)).status).toBe(404);
    expect((await api('DELETE', '/tokens/alpha-temp', minted.body.value)).status).toBe(403);
    expect((await api('POST', '/tokens', minted.body.value, { name: 'nope' })).status).toBe(403);
    expect((await api('GET', '/tokens', minted.body.value)).status).toBe(403);
    expect((await api('DELETE', '/tokens/alpha-temp', manager)).status).toBe(204);
    expect((await api('GET', '/projects', minted.body.value)).status).toBe(401);
    expect((await api('DELETE', '/tokens/alpha-temp', manager)).status).toBe(404);
    // a name no token can have went into a label selector the cluster refused: 500
    for (const name of ['%00', 'a%2Fb', '..', '__proto__', '%E2%80%AE', 'x'.repeat(5000)]) {
      expect((await api('DELETE', `/tokens/${name}`, manager)).status, name.slice(0, 20)).toBe(404);
    }
  });

  it('the admin token (svc dev) lists every token and may mint unscoped ones', async () => {
    const all = await api('GET', '/tokens', dev.token);
    expect((all.body.tokens as { name: string }[]).map((t) => t.name)).toEqual(expect.arrayContaining(['used-once', 'alpha-ci']));
    const unscoped = await api('POST', '/tokens', dev.token, { name: 'global-reader', project_id: null });
    expect(unscoped.status).toBe(201);
    expect(unscoped.body.token.project_id).toBeNull();
    expect((await api('POST', '/tokens', dev.token, { name: 'ghost', project_id: '00000000-0000-4000-8000-000000000000' })).status).toBe(400);
  });
});
