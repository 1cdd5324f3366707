// The app over HTTP with an in-memory project store and token table: status codes and bodies.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { createApp } from './app.js';
import { ApiError } from './errors.js';
import type { ProjectStore } from './projects/index.js';
import type { Principal } from './tokens.js';
import type { Project, Trigger } from '../resources/index.js';

const projects: Project[] = [];
let failNextList = false;
let unreachableNextList = false;
const store: ProjectStore = {
  async listProjects(namespace) {
    if (failNextList) { failNextList = false; throw new Error('etcd exploded with secret sauce'); }
    if (unreachableNextList) { unreachableNextList = false; throw new ApiError(502, 'the upstream could not be reached: connect ECONNREFUSED 127.0.0.1:9'); }
    return projects.filter((p) => p.metadata.namespace === namespace);
  },
  async createProject(project) {
    if (projects.some((p) => p.metadata.name === project.metadata.name)) throw new ApiError(409, `project ${project.metadata.name} already exists`);
    const created = { ...project, metadata: { ...project.metadata, uid: randomUUID(), creationTimestamp: '2026-01-01T00:00:00Z' } };
    projects.push(created);
    return created;
  },
  async getProject(namespace, uid) {
    if (failNextList) { failNextList = false; throw new Error('etcd exploded with secret sauce'); }
    return projects.find((p) => p.metadata.namespace === namespace && p.metadata.uid === uid);
  },
  async deleteProject(project) {
    projects.splice(projects.indexOf(project), 1);
  },
  async triggersOf(project) {
    return project.metadata.uid === projects[0]?.metadata.uid ? [{ metadata: { name: 'web-nightly' }, spec: { slug: 'nightly', type: 'cron' } } as Trigger] : [];
  },
};

const USER = randomUUID();
let scopedUid = '';
const tokens: Record<string, () => Principal> = {
  'svc_admin': () => ({ tokenName: 'a', userId: USER, access: 'write', projectUid: null, capabilities: '*' }),
  'svc_reader': () => ({ tokenName: 'r', userId: USER, access: 'read', projectUid: null, capabilities: new Set() }),
  'svc_scoped': () => ({ tokenName: 's', userId: USER, access: 'write', projectUid: scopedUid, capabilities: '*' }),
  'svc_writer': () => ({ tokenName: 'w', userId: USER, access: 'write', projectUid: null, capabilities: new Set(['project.read']) }),
};
let ready = false;
const logged: string[] = [];
let server: Server;
let base: string;

beforeAll(async () => {
  const app = createApp({
    projects: store,
    verifyToken: async (token) => tokens[token]?.() ?? null,
    isReady: () => ready,
    config: { projectNamespace: 'default' },
    log: (m) => logged.push(m),
  });
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

interface ResponseBody { error?: string; problems?: string[]; project?: { id: string; [field: string]: unknown }; projects?: { name: string }[]; status?: string }

async function call(method: string, path: string, token?: string, body?: unknown, raw?: string) {
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined || raw !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(base + path, { method, headers, body: raw ?? (body === undefined ? undefined : JSON.stringify(body)) });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as ResponseBody };
}

describe('API app', () => {
  it('serves health outside /v1 and readiness once informers synced; /v1 answers 503 (never 404) until then', async () => {
    expect(await call('GET', '/healthz')).toEqual({ status: 200, body: { status: 'ok' } });
    expect((await call('GET', '/readyz')).status).toBe(503);
    for (const [method, path, token] of [['GET', `/v1/projects/${randomUUID()}`, 'svc_admin'], ['GET', '/v1/projects', undefined], ['POST', `/v1/webhooks/projects/${randomUUID()}/nightly`, undefined]] as const) {
      const res = await fetch(base + path, { method, headers: token ? { authorization: `Bearer ${token}` } : {} });
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('1');
      expect(await res.json()).toEqual({ error: expect.stringContaining('not ready') });
    }
    ready = true;
    expect(await call('GET', '/readyz')).toEqual({ status: 200, body: { status: 'ready' } });
  });

  it('401s without a token, with a malformed header and with an unknown token', async () => {
    expect(await call('GET', '/v1/projects')).toEqual({ status: 401, body: { error: expect.stringContaining('missing bearer token') } });
    const res = await fetch(`${base}/v1/projects`, { headers: { authorization: 'Basic abc' } });
    expect(res.status).toBe(401);
    expect(await call('GET', '/v1/projects', 'svc_nope')).toEqual({ status: 401, body: { error: 'unknown or revoked token: use a current one (a cluster admin makes one with `svc tokens create`; under `svc dev`, `source .svc-dev/env` gives its admin token)' } });
    expect((await call('POST', '/v1/projects', undefined, undefined, '{not json')).status).toBe(401);
  });

  it('creates a project (201), refuses a duplicate (409) and bad bodies (400) without writing', async () => {
    const created = await call('POST', '/v1/projects', 'svc_admin', { name: 'web', repo_url: '/srv/web.git', description: 'the site' });
    expect(created.status).toBe(201);
    expect(created.body.project).toMatchObject({ name: 'web', namespace: 'default', repo_url: '/srv/web.git', default_branch: 'main', description: 'the site', manifest: null });
    scopedUid = created.body.project!.id;
    expect(await call('POST', '/v1/projects', 'svc_admin', { name: 'web', repo_url: '/x' })).toEqual({ status: 409, body: { error: 'project web already exists' } });
    const bad = await call('POST', '/v1/projects', 'svc_admin', { name: 'Web!', repo_url: '' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain('DNS-1123');
    expect(bad.body.problems).toHaveLength(2);
    expect(await call('POST', '/v1/projects', 'svc_admin', undefined, '{not json')).toEqual({ status: 400, body: { error: 'request body is not valid JSON' } });
    expect(projects).toHaveLength(1);
  });

  it('403s a read-only token on create and a scoped token outside its project', async () => {
    expect((await call('POST', '/v1/projects', 'svc_reader', { name: 'api', repo_url: '/x' }))).toEqual({
      status: 403, body: { error: 'this token has read access only; the request needs write access' },
    });
    expect((await call('POST', '/v1/projects', 'svc_scoped', { name: 'api', repo_url: '/x' })).status).toBe(403);
    expect((await call('GET', `/v1/projects/${randomUUID()}`, 'svc_scoped')).status).toBe(403);
    expect(projects).toHaveLength(1);
  });

  it('lists and shows projects with their triggers; a scoped token sees only its project', async () => {
    await call('POST', '/v1/projects', 'svc_admin', { name: 'api', repo_url: '/srv/api.git' });
    const all = await call('GET', '/v1/projects', 'svc_reader');
    expect(all.body.projects!.map((p) => p.name)).toEqual(['api', 'web']);
    const scoped = await call('GET', '/v1/projects', 'svc_scoped');
    expect(scoped.body.projects!.map((p) => p.name)).toEqual(['web']);
    const shown = await call('GET', `/v1/projects/${scopedUid}`, 'svc_scoped');
    expect(shown.status).toBe(200);
    expect(shown.body.project).toMatchObject({ id: scopedUid, name: 'web', triggers: [{ slug: 'nightly', type: 'cron' }] });
  });

  it('400s a malformed project id and 404s an unknown one', async () => {
    expect(await call('GET', '/v1/projects/not-a-uuid', 'svc_reader')).toEqual({ status: 400, body: { error: 'project id "not-a-uuid" is not a UUID' } });
    const id = randomUUID();
    expect(await call('GET', `/v1/projects/${id}`, 'svc_reader')).toEqual({ status: 404, body: { error: `project ${id} not found` } });
  });

  it('deletes a project (204, then 404); only an unscoped write token with project.delete may; a bad id changes nothing', async () => {
    const created = await call('POST', '/v1/projects', 'svc_admin', { name: 'doomed', repo_url: '/srv/doomed.git' });
    const id = created.body.project!.id;
    expect(await call('DELETE', `/v1/projects/${id}`, 'svc_reader')).toEqual({ status: 403, body: { error: 'this token has read access only; the request needs write access' } });
    expect(await call('DELETE', `/v1/projects/${id}`, 'svc_writer')).toEqual({ status: 403, body: { error: 'this token lacks the capability project.delete' } });
    // a project's own token (every capability) cannot delete it: a session's token must not remove its project
    expect(await call('DELETE', `/v1/projects/${scopedUid}`, 'svc_scoped')).toEqual({ status: 403, body: { error: 'a token scoped to a project cannot delete a project (a session\'s token must not remove its own): use an unscoped token' } });
    expect(await call('DELETE', '/v1/projects/doomed', 'svc_admin')).toEqual({ status: 400, body: { error: 'project id "doomed" is not a UUID' } });
    expect(projects.map((p) => p.metadata.name)).toContain('doomed');
    expect(await call('DELETE', `/v1/projects/${id}`, 'svc_admin')).toEqual({ status: 204, body: {} });
    expect(projects.map((p) => p.metadata.name)).not.toContain('doomed');
    expect(await call('DELETE', `/v1/projects/${id}`, 'svc_admin')).toEqual({ status: 404, body: { error: `project ${id} not found` } });
    expect((await call('GET', `/v1/projects/${scopedUid}`, 'svc_scoped')).status).toBe(200);
  });

  it('answers unknown routes with a JSON 404 and hides internal errors', async () => {
    expect((await call('GET', '/v2/nothing')).status).toBe(404);
    expect((await call('GET', '/v1/nothing', 'svc_reader')).body).toEqual({ error: 'no route for GET /v1/nothing' });
    failNextList = true;
    expect(await call('GET', '/v1/projects', 'svc_reader')).toEqual({ status: 500, body: { error: 'internal error' } });
    expect(logged.join('\n')).toContain('secret sauce');
    expect(logged.at(-1)).toMatch(/^GET \/v1\/projects: Error: etcd exploded with secret sauce\n\s+at /); // unexpected: its stack
  });

  it('logs a 5xx the code explained (an upstream away) as one line, without a stack to bury it', async () => {
    unreachableNextList = true;
    expect(await call('GET', '/v1/projects', 'svc_reader')).toEqual({ status: 502, body: { error: 'the upstream could not be reached: connect ECONNREFUSED 127.0.0.1:9' } });
    expect(logged.at(-1)).toBe('GET /v1/projects: 502 the upstream could not be reached: connect ECONNREFUSED 127.0.0.1:9');
  });
});
