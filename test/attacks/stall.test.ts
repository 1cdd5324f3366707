// A client that sends its headers (or part of a body) and then nothing holds no server of svc for
// long (issue 20 §4): the API, the local cluster and a sandbox's svc-agent of a real svc dev each
// cut it with 408, here after SVC_HTTP_STALL_TIMEOUT_MS (60 s by default, shortened for the test).
// A watch that streams nothing for longer stays open: only stalls are cut, never long answers.
import net from 'node:net';
import tls from 'node:tls';
import path from 'node:path';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterFetch } from '../../src/localcluster/client.js';
import { buildArtifacts, cleanupArtifacts } from '../daemon/harness.js';
import { fixtureEngineArgs, removeDevDir, startDev, type DevInstance } from '../helpers/dev.js';
import { makeRepo, runOk, waitFor } from '../dev/util.js';

const STALL_MS = 1500;
let tmp: string;
let dev: DevInstance;
let kubeUrl: string;
let daemonAddress: string;
let sandboxToken: string;
let kubeToken: string;

/** Writes `text` and then nothing; resolves with what came back and how long until the server closed. */
function stall(connect: () => net.Socket, text: string): Promise<{ answer: string; ms: number }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = connect();
    let answer = '';
    socket.on('data', (c: Buffer) => { answer += c.toString(); });
    socket.on('error', () => undefined);
    socket.once('close', () => resolve({ answer, ms: Date.now() - started }));
    socket.write(text);
  });
}

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'svc-stall-'));
  const { fixtureEngine } = await buildArtifacts();
  dev = await startDev({ dataDir: path.join(tmp, 'dev'), extraEnv: { SVC_HTTP_STALL_TIMEOUT_MS: String(STALL_MS) }, args: fixtureEngineArgs(fixtureEngine) });
  kubeUrl = /server: "?(https?:\/\/[^"\s]+)/.exec(readFileSync(dev.kubeconfig, 'utf8'))![1]!;
  const repo = path.join(tmp, 'repo');
  makeRepo(repo, { 'svc.yaml': 'svc_version: 2\ndefault_agent: coder\nagents:\n  coder: {}\n' });
  await runOk('kubectl', ['apply', '-f', '-'], dev.env, JSON.stringify({ apiVersion: 'svc.dev/v1alpha1', kind: 'Project', metadata: { name: 'demo', namespace: 'default' }, spec: { repoUrl: repo, defaultBranch: 'main' } }));
  await waitFor('project Ready', async () => (await runOk('kubectl', ['get', 'project', 'demo', '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}'], dev.env)) === 'True', 60_000);
  const projectId = (await runOk('kubectl', ['get', 'project', 'demo', '-o', 'jsonpath={.metadata.uid}'], dev.env)).trim();
  const res = await fetch(`${dev.apiUrl}/projects/${projectId}/sessions`, { method: 'POST', headers: { authorization: `Bearer ${dev.token}`, 'content-type': 'application/json' }, body: '{}' });
  const id = ((await res.json()) as { session: { id: string } }).session.id;
  daemonAddress = await waitFor('the sandbox address', async () => (await runOk('kubectl', ['get', 'sandbox', id, '-o', 'jsonpath={.status.address}'], dev.env)).trim() || undefined, 60_000);
  sandboxToken = Buffer.from(await runOk('kubectl', ['get', 'secret', `svc-session-${id}`, '-o', 'jsonpath={.data.sandboxToken}'], dev.env), 'base64').toString();
  kubeToken = readFileSync(path.join(dev.dataDir, 'cluster', 'admin-token'), 'utf8').trim();
}, 120_000);

afterAll(async () => {
  await dev?.stop();
  if (tmp) removeDevDir(tmp);
  cleanupArtifacts();
});

describe('a stalled request is cut by every server of svc', () => {
  const api = () => { const u = new URL(dev.apiUrl); return net.connect(Number(u.port), u.hostname); };
  const cluster = () => { const u = new URL(kubeUrl); return tls.connect({ host: u.hostname, port: Number(u.port), rejectUnauthorized: false }); };
  const daemon = () => { const [host, port] = daemonAddress.split(':') as [string, string]; return net.connect(Number(port), host); };

  // a route of each that reads its body, as a caller allowed to (the cut does not depend on rights)
  const routes = {
    api: () => ['/v1/tokens', `Bearer ${dev.token}`],
    cluster: () => ['/api/v1/namespaces/default/configmaps', `Bearer ${kubeToken}`],
    daemon: () => ['/svc/env', `Bearer ${sandboxToken}`],
  };

  it.each([['the API', api, 'api'], ['the local cluster', cluster, 'cluster'], ['svc-agent', daemon, 'daemon']] as const)('%s: headers that stop coming, and a body that stops coming: 408', async (_name, connect, kind) => {
    const headers = await stall(connect, 'POST /anything HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    expect(headers.answer).toMatch(/^HTTP\/1\.1 408/);
    const [route, authorization] = routes[kind]();
    const body = await stall(connect, `POST ${route} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${authorization}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"half":`);
    expect(body.answer).toMatch(/^HTTP\/1\.1 408/);
    // cut after the stall, never before (no timing upper bound: the machine is shared)
    expect(body.ms).toBeGreaterThanOrEqual(STALL_MS - 100);
  });

  it.each([['the API', api], ['the local cluster (after its TLS handshake)', cluster], ['svc-agent', daemon]] as const)('%s: a connection that sends nothing is closed (408)', async (_name, connect) => {
    const silent = await stall(connect, '');
    expect(silent.answer).toMatch(/^HTTP\/1\.1 408/);
    expect(silent.ms).toBeGreaterThanOrEqual(STALL_MS - 100);
  });

  it('the local cluster: a TLS handshake that never starts is cut too', async () => {
    const u = new URL(kubeUrl);
    const silent = await stall(() => net.connect(Number(u.port), u.hostname), '');
    expect(silent.ms).toBeGreaterThanOrEqual(STALL_MS - 100);
  });

  it('an early answer to a body that then stalls (401 before reading it) does not hold the connection either', async () => {
    const early = await stall(api, 'POST /v1/tokens HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"half":');
    expect(early.answer).toMatch(/^HTTP\/1\.1 401/);
    expect(early.ms).toBeGreaterThanOrEqual(STALL_MS - 100);
  });

  it('a watch that streams nothing for three times the limit stays open', async () => {
    const access = { url: kubeUrl, token: kubeToken, ca: readFileSync(path.join(dev.dataDir, 'cluster', 'serving.crt'), 'utf8') };
    const controller = new AbortController();
    const res = await clusterFetch(access)('/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=0&labelSelector=nothing%3Dhere', { signal: controller.signal });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let ended = false;
    void reader.read().then(() => { ended = true; }, () => { ended = true; });
    await new Promise((r) => setTimeout(r, STALL_MS * 3));
    expect(ended).toBe(false);
    controller.abort();
  });
});
