// The local cluster against a web page the developer visits (issue 15): cross-site simple POSTs,
// DNS rebinding (a foreign Host), deeply nested bodies, and its files on disk.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type http from 'node:http';
import https from 'node:https';
import { statSync } from 'node:fs';
import path from 'node:path';
import { startTestCluster, type TestCluster } from './helpers.js';

let tc: TestCluster;
beforeAll(async () => { tc = await startTestCluster(); });
afterAll(async () => { await tc?.close(); });

const SECRETS = '/api/v1/namespaces/default/secrets';
const secret = (name: string) => JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, stringData: { token: 'x' } });

/** A raw request as the admin (fetch may not set Host). */
function raw(method: string, urlPath: string, headers: http.OutgoingHttpHeaders, body?: string): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = https.request(`${tc.cluster.url}${urlPath}`, { method, headers: { authorization: `Bearer ${tc.cluster.token}`, ...headers }, ca: tc.cluster.ca, servername: '' }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { text += c; });
      res.on('end', () => resolve({ status: res.statusCode!, body: text.startsWith('{') ? JSON.parse(text) : { text } }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const secretNames = async () => ((await tc.api('GET', SECRETS)).body.items as { metadata: { name: string } }[]).map((s) => s.metadata.name);

describe('request guard', () => {
  it('answers 415 to bodies that are not JSON, YAML or a patch type (a cross-site simple POST), creating nothing', async () => {
    for (const type of ['text/plain', 'text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const res = await tc.api('POST', SECRETS, secret('from-a-web-page'), type);
      expect(res.status, type).toBe(415);
      expect(res.body).toMatchObject({ kind: 'Status', reason: 'UnsupportedMediaType', code: 415 });
    }
    expect(await secretNames()).not.toContain('from-a-web-page');
    expect((await tc.api('POST', SECRETS, secret('json-ok'))).status).toBe(201);
    expect((await tc.api('POST', SECRETS, 'apiVersion: v1\nkind: Secret\nmetadata: {name: yaml-ok}\n', 'application/yaml')).status).toBe(201);
  });

  it('refuses a Host that is not loopback or the bound address (DNS rebinding) with 403', async () => {
    const port = new URL(tc.cluster.url).port;
    for (const host of [`evil.example:${port}`, 'attacker.test', `127.0.0.1.nip.io:${port}`]) {
      const res = await raw('GET', SECRETS, { host });
      expect(res.status, host).toBe(403);
      expect(res.body).toMatchObject({ kind: 'Status', reason: 'Forbidden' });
    }
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, 'localhost']) {
      expect((await raw('GET', SECRETS, { host })).status, host).toBe(200);
    }
  });

  it('refuses a cross-site Origin with 403, creating nothing; a loopback Origin passes', async () => {
    const port = new URL(tc.cluster.url).port;
    for (const headers of [{ origin: 'https://evil.example' }, { origin: 'null' }, { 'sec-fetch-site': 'cross-site' }]) {
      const res = await raw('POST', SECRETS, { ...headers, 'content-type': 'application/json' }, secret('cross-site'));
      expect(res.status, JSON.stringify(headers)).toBe(403);
    }
    expect(await secretNames()).not.toContain('cross-site');
    expect((await raw('GET', SECRETS, { origin: `http://localhost:${port}` })).status).toBe(200);
  });

  it('answers 400 with a Status to deeply nested JSON and YAML, not 500', async () => {
    const deepJson = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"data":${'['.repeat(200_000)}${']'.repeat(200_000)}}`;
    const deepYaml = `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\nextra:\n${Array.from({ length: 1000 }, (_, i) => `${'  '.repeat(i + 1)}k:`).join('\n')} 1\n`;
    for (const [body, type] of [[deepJson, 'application/json'], [deepYaml, 'application/yaml']] as const) {
      const res = await tc.api('POST', '/api/v1/namespaces/default/configmaps', body, type);
      expect(res.status, type).toBe(400);
      expect(res.body).toMatchObject({ kind: 'Status', reason: 'BadRequest', code: 400 });
    }
    // a merge patch too
    const patch = await tc.api('PATCH', `${SECRETS}/json-ok`, `{"metadata":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}`, 'application/merge-patch+json');
    expect(patch.status).toBe(400);
  });
});

describe('files on disk', () => {
  it('the journal and snapshot are 600, their directory 700 (they hold every Secret)', async () => {
    const dir = path.join(tc.dir, 'data');
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(path.join(dir, 'journal.ndjson')).mode & 0o777).toBe(0o600);
  });
});
