// Route groups over HTTP: each group's own auth and body parsing, most specific path first.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import express, { Router } from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { principalOf } from './auth.js';
import { ApiError, errorHandler, unknownRoute } from './errors.js';
import { mountGroups, type RouteGroup } from './groups.js';

let server: Server;
let base: string;

beforeAll(async () => {
  const rest = Router();
  rest.post('/', (req, res) => { res.json({ user: principalOf(res).userId, body: req.body }); });
  const webhooks = Router({ mergeParams: true });
  webhooks.post('/:slug', (req, res) => {
    res.json({ slug: req.params.slug, raw: Buffer.isBuffer(req.body) ? (req.body as Buffer).toString('utf8') : null });
  });
  const git = Router({ mergeParams: true });
  git.get('/clone-credential', (req, res) => { res.json({ project: (req.params as Record<string, string>).projectId, via: res.locals.via }); });
  const groups: RouteGroup[] = [
    { path: '/v1/projects', auth: 'bearer', body: 'json', router: rest },
    { path: '/v1/webhooks/projects/:projectId', auth: 'none', body: 'raw', router: webhooks },
    {
      path: '/v1/projects/:projectId/git', body: 'raw', router: git,
      auth: (req, res, next) => {
        if (req.get('authorization') !== 'Bearer svcsbx.sandbox') throw new ApiError(401, 'sandbox token required');
        res.locals.via = 'sandbox';
        next();
      },
    },
  ];
  const app = express();
  mountGroups(app, groups, {
    verifyToken: async (token) => (token === 'svc_ok' ? { tokenName: 't', userId: 'u1', access: 'write', projectUid: null, capabilities: '*' } : null),
    bodyLimit: '1kb',
  });
  app.use(unknownRoute);
  app.use(errorHandler({ log: () => undefined }));
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

async function call(method: string, path: string, headers: Record<string, string> = {}, body?: string) {
  const res = await fetch(base + path, { method, headers, body });
  return { status: res.status, body: await res.json() as Record<string, unknown> };
}

describe('route groups', () => {
  it('a bearer group authenticates before it parses JSON', async () => {
    expect((await call('POST', '/v1/projects', { 'content-type': 'application/json' }, '{bad')).status).toBe(401);
    expect(await call('POST', '/v1/projects', { authorization: 'Bearer svc_ok', 'content-type': 'application/json' }, '{"a":1}'))
      .toEqual({ status: 200, body: { user: 'u1', body: { a: 1 } } });
  });

  it('a JSON group reads its body as JSON whatever the Content-Type says: it was dropped, and the route went ahead without it', async () => {
    const ok = { authorization: 'Bearer svc_ok' };
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/octet-stream', 'application/merge-patch+json']) {
      expect(await call('POST', '/v1/projects', { ...ok, 'content-type': type }, '{"a":1}')).toEqual({ status: 200, body: { user: 'u1', body: { a: 1 } } });
    }
    expect(await call('POST', '/v1/projects', ok, '{"a":1}')).toEqual({ status: 200, body: { user: 'u1', body: { a: 1 } } }); // fetch says text/plain
    expect(await call('POST', '/v1/projects', { ...ok, 'content-type': 'application/x-www-form-urlencoded' }, 'a=1'))
      .toEqual({ status: 400, body: { error: 'request body is not valid JSON' } });
    expect(await call('POST', '/v1/projects', ok)).toEqual({ status: 200, body: { user: 'u1', body: {} } }); // an empty body
  });

  it('a path that is not valid percent-encoding is a 400, not a 500', async () => {
    for (const id of ['%', '%zz']) {
      expect(await call('POST', `/v1/webhooks/projects/${id}/x`)).toEqual({ status: 400, body: { error: 'the path is not valid percent-encoding' } });
    }
  });

  it('a webhook group gets the raw bytes with no bearer token, whatever the content type', async () => {
    const payload = '{"b": 2,  "spaced": true}';
    expect(await call('POST', '/v1/webhooks/projects/p1/nightly', { 'content-type': 'application/json' }, payload))
      .toEqual({ status: 200, body: { slug: 'nightly', raw: payload } });
    // the limit is said: a client cannot guess it
    expect(await call('POST', '/v1/webhooks/projects/p1/nightly', { 'content-type': 'text/plain' }, 'x'.repeat(2048)))
      .toEqual({ status: 413, body: { error: 'request body is too large: at most 1024 bytes here' } });
  });

  it('the git group under /v1/projects answers with its own auth, before the projects group refuses the token', async () => {
    expect(await call('GET', '/v1/projects/p1/git/clone-credential', { authorization: 'Bearer svcsbx.sandbox' }))
      .toEqual({ status: 200, body: { project: 'p1', via: 'sandbox' } });
    expect(await call('GET', '/v1/projects/p1/git/clone-credential', { authorization: 'Bearer svc_ok' }))
      .toEqual({ status: 401, body: { error: 'sandbox token required' } });
  });

  it('an unknown /v1 path needs a bearer token before it is a 404', async () => {
    expect((await call('GET', '/v1/nothing')).status).toBe(401);
    expect(await call('GET', '/v1/nothing', { authorization: 'Bearer svc_ok' })).toEqual({ status: 404, body: { error: 'no route for GET /v1/nothing' } });
  });
});
