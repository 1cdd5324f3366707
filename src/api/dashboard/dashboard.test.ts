// The dashboard route group over HTTP: index without caching, hashed assets cached for a year in
// the encoding the client accepts, the security headers on every answer, /v1 untouched.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { createApp } from '../app.js';
import { CONTENT_SECURITY_POLICY } from './index.js';

let dir: string;
let server: Server;
let base: string;
const SCRIPT = 'console.log("dashboard")';

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'svc-dashboard-'));
  mkdirSync(path.join(dir, 'assets'));
  writeFileSync(path.join(dir, 'index.html'), '<!doctype html><script type="module" src="assets/app-ABC.js"></script>');
  writeFileSync(path.join(dir, 'assets/app-ABC.js'), SCRIPT);
  writeFileSync(path.join(dir, 'assets/app-ABC.js.gz'), gzipSync(SCRIPT));
  writeFileSync(path.join(dir, 'assets/notes.txt'), 'not an asset type');
  const app = createApp({
    projects: { listProjects: async () => [], getProject: async () => undefined, createProject: async (p) => p, triggersOf: async () => [], deleteProject: async () => {} },
    verifyToken: async (token) => (token === 'svc_reader' ? { tokenName: 'r', userId: 'u', access: 'read', projectUid: null, capabilities: new Set(['project.gitops.push']) } : null),
    isReady: () => true,
    config: { projectNamespace: 'default' },
    dashboard: { dir },
  });
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

function expectSecurityHeaders(res: Response) {
  expect(res.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
  expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  expect(res.headers.get('x-frame-options')).toBe('DENY');
}

describe('dashboard route group', () => {
  it('serves index.html at / with no-cache and a CSP without inline scripts or framing', async () => {
    const res = await fetch(`${base}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expectSecurityHeaders(res);
    expect(CONTENT_SECURITY_POLICY).toContain("script-src 'self'");
    expect(CONTENT_SECURITY_POLICY).not.toContain('unsafe-inline');
    expect(CONTENT_SECURITY_POLICY).toContain("frame-ancestors 'none'");
    expect(await res.text()).toContain('assets/app-ABC.js');
  });

  it('serves a hashed asset for a year, gzip when accepted, identity otherwise', async () => {
    const zipped = await fetch(`${base}/assets/app-ABC.js`, { headers: { 'accept-encoding': 'br;q=0, gzip' } });
    expect(zipped.status).toBe(200);
    expect(zipped.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(zipped.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(zipped.headers.get('content-encoding')).toBe('gzip');
    expect(zipped.headers.get('vary')).toBe('Accept-Encoding');
    expectSecurityHeaders(zipped);
    expect(await zipped.text()).toBe(SCRIPT); // fetch decodes what the header names
    const plain = await fetch(`${base}/assets/app-ABC.js`, { headers: { 'accept-encoding': 'identity' } });
    expect(plain.headers.get('content-encoding')).toBeNull();
    expect(await plain.text()).toBe(SCRIPT);
  });

  it('answers 404 JSON for unknown assets, other file types and paths outside assets/', async () => {
    for (const p of ['/assets/app-XYZ.js', '/assets/notes.txt', '/assets/..%2Findex.html', '/index.htm']) {
      const res = await fetch(base + p);
      expect(res.status, p).toBe(404);
      expect(((await res.json()) as { error: string }).error).toContain('no route');
    }
  });

  it('leaves /v1 to the API: 401 without a token, and GET /v1/me tells the caller its access', async () => {
    expect((await fetch(`${base}/v1/me`)).status).toBe(401);
    const res = await fetch(`${base}/v1/me`, { headers: { authorization: 'Bearer svc_reader' } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ user_id: 'u', access: 'read', project_id: null, capabilities: ['project.gitops.push'] });
  });
});
