// Issue 12 §3: /metrics of the operator and the API scraped from a running `svc dev`, and their
// structured JSON logs (one object per line, a level, no secret).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT, removeDevDir, fixtureEngineArgs, startDev, type DevInstance } from '../helpers/dev.js';
import { buildArtifacts, cleanupArtifacts } from '../daemon/harness.js';
import { makeRepo, manifestWithTriggers, runOk, waitFor } from './util.js';

let tmp: string;
let dev: DevInstance;
let operatorUrl: string;

/** Samples of `name` as "labels -> value" (labels as written, '' without labels). */
function samples(text: string, name: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = new RegExp(`^${name}(\\{[^}]*\\})? (\\S+)$`).exec(line);
    if (m) out.set(m[1] ?? '', Number(m[2]));
  }
  return out;
}

const scrape = async (url: string) => {
  const res = await fetch(`${url}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('text/plain');
  return res.text();
};

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'svc-metrics-'));
  const repo = path.join(tmp, 'repo');
  makeRepo(repo, { 'svc.yaml': manifestWithTriggers(), 'README.md': '# example\n' });
  const { fixtureEngine } = await buildArtifacts();
  dev = await startDev({
    dataDir: path.join(tmp, 'dev'),
    args: fixtureEngineArgs(fixtureEngine),
    extraEnv: { SVC_SANDBOX_DIRECT_LOCAL_REPOS: '1' },
  });
  const port = /health on port (\d+)/.exec(dev.output())?.[1] ?? (await waitFor('the operator port', async () => /health on port (\d+)/.exec(dev.output())?.[1]));
  operatorUrl = `http://127.0.0.1:${port}`;
  const manifest = readFileSync(path.join(REPO_ROOT, 'examples/project.yaml'), 'utf8').replace('repoUrl: REPO_URL', `repoUrl: ${repo}`);
  await runOk('kubectl', ['apply', '-f', '-'], dev.env, manifest);
}, 90_000);

afterAll(async () => {
  await dev?.stop();
  removeDevDir(tmp);
  cleanupArtifacts();
});

describe('metrics and logs', () => {
  it('the API counts requests by route template and status, with durations', async () => {
    const headers = { authorization: `Bearer ${dev.token}` };
    expect((await fetch(`${dev.apiUrl}/projects`, { headers })).status).toBe(200);
    expect((await fetch(`${dev.apiUrl}/projects`)).status).toBe(401);
    const text = await scrape(dev.apiUrl.replace(/\/v1$/, ''));
    const requests = samples(text, 'svc_http_requests_total');
    expect(requests.get('{method="GET",route="/v1/projects",status="200"}')).toBeGreaterThanOrEqual(1);
    expect(requests.get('{method="GET",route="/v1/projects/*",status="401"}')).toBeGreaterThanOrEqual(1);
    expect(samples(text, 'svc_http_request_duration_seconds_count').get('{method="GET",route="/v1/projects"}')).toBeGreaterThanOrEqual(1);
    for (const name of ['svc_webhook_deliveries_total', 'svc_git_pushes_total']) expect(text).toContain(`# TYPE ${name} counter`);
    expect(samples(text, 'svc_process_resident_memory_bytes').get('')).toBeGreaterThan(0);
    expect(text).not.toContain('svc_reconcile_total'); // the API runs no controllers
  });

  it('after a session: sessions by status, sandboxes by state and provider, the session routes by template', async () => {
    const headers = { authorization: `Bearer ${dev.token}`, 'content-type': 'application/json' };
    await waitFor('the project reconciled', async () => (await runOk('kubectl', ['get', 'project', 'example', '-o', 'jsonpath={.status.defaultBranchSha}'], dev.env)).trim() !== '', 60_000);
    const projectId = (await runOk('kubectl', ['get', 'project', 'example', '-o', 'jsonpath={.metadata.uid}'], dev.env)).trim();
    const started = await fetch(`${dev.apiUrl}/projects/${projectId}/sessions`, { method: 'POST', headers, body: '{}' });
    expect(started.status).toBe(201);
    const text = await waitFor('the session running in the metrics', async () => {
      const t = await scrape(operatorUrl);
      return samples(t, 'svc_sessions').get('{status="running"}') === 1 ? t : undefined;
    }, 90_000);
    expect(samples(text, 'svc_sandboxes').get('{state="active",provider="process"}')).toBe(1);
    for (const controller of ['session', 'sandbox']) expect(samples(text, 'svc_reconcile_duration_seconds_count').get(`{controller="${controller}"}`)).toBeGreaterThanOrEqual(1);
    const api = await scrape(dev.apiUrl.replace(/\/v1$/, ''));
    expect(samples(api, 'svc_http_requests_total').get('{method="POST",route="/v1/projects/:projectId/sessions",status="201"}')).toBe(1);
  }, 120_000);

  it('the operator reports leadership, reconciles, queues and objects', async () => {
    const text = await waitFor('a project reconcile counted', async () => {
      const t = await scrape(operatorUrl);
      const reconciles = samples(t, 'svc_reconcile_total');
      // the project controller asks for its periodic resync: a good reconcile is a requeue
      const ok = (reconciles.get('{controller="project",result="success"}') ?? 0) + (reconciles.get('{controller="project",result="requeue"}') ?? 0);
      return ok >= 1 ? t : undefined;
    });
    expect(samples(text, 'svc_operator_leader').get('')).toBe(1);
    expect(samples(text, 'svc_reconcile_duration_seconds_count').get('{controller="project"}')).toBeGreaterThanOrEqual(1);
    expect(samples(text, 'svc_workqueue_depth').get('{controller="project"}')).toBeGreaterThanOrEqual(0);
    expect(samples(text, 'svc_workqueue_queue_duration_seconds_count').get('{controller="project"}')).toBeGreaterThanOrEqual(1);
    for (const [name, type] of [['svc_sessions', 'gauge'], ['svc_sandboxes', 'gauge'], ['svc_trigger_fires', 'gauge'], ['svc_trigger_fires_queued', 'gauge'], ['svc_scheduler_lateness_seconds', 'histogram']]) {
      expect(text).toContain(`# TYPE ${name} ${type}`);
    }
    expect(samples(text, 'svc_trigger_fires_queued').get('')).toBe(0);
  });

  it('both components log one JSON object per line, with a level, and no token', () => {
    const lines = dev.output().split('\n').filter((l) => l.startsWith('[operator] ') || l.startsWith('[api] ')).map((l) => l.replace(/^\[\w+\] /, ''));
    expect(lines.length).toBeGreaterThan(2);
    for (const line of lines) {
      const entry = JSON.parse(line) as { level: string; msg: string; component: string };
      expect(['debug', 'info', 'warn', 'error']).toContain(entry.level);
      expect(entry.msg).toBeTruthy();
    }
    expect(lines.some((l) => l.includes('"component":"operator"'))).toBe(true);
    expect(lines.some((l) => l.includes('"component":"api"'))).toBe(true);
    // (svc dev itself prints the admin token for the person who started it; the components never log it)
    for (const line of lines) expect(line).not.toContain(dev.token.slice(4));
  });
});
