// bench/scale (issue 24 §4): one operator carrying thousands of live sessions. Hollow sandboxes
// (src/localcluster/node/README.md): the operator's sandbox image is `svc-hollow-sandbox`, so every
// sandbox Pod is played by the node simulator without a process, answering svc-agent's health,
// prompt and abort contract at its Pod address. Each component in its own process, as the chart runs
// them: the local cluster (dist/src/localcluster/main.js), the node simulator (bench/scale/node.ts),
// the API (dist/src/main/api.js) and the operator (dist/src/main/operator.js, kubernetes provider).
// Measured: CPU and RSS of every process at rest with no session; GET /v1/projects/:id/sessions and
// webhook receipt latency on the empty cluster; N sessions POSTed (the time from the first POST to
// all `running`); CPU and RSS at rest with N live sessions, with the operator's reconcile rates; the
// same two latencies at that size; a stop-all (time until all `stopped`).
// Settings (env): SVC_BENCH_SESSIONS (default 5000), SVC_BENCH_REST_SECONDS (30),
// SVC_BENCH_LIST_RUNS (10), SVC_BENCH_WEBHOOKS (50 per measurement, at 5/s),
// SVC_BENCH_TIMEOUT_SECONDS (per phase, 7200), SVC_BENCH_CPU_PROF=DIR (the operator runs with
// --cpu-prof, its profile written there on exit), SVC_BENCH_HEAP_SNAPSHOT=DIR (a heap snapshot of
// the operator there after the window at rest), SVC_BENCH_KEEP=1 (keep the work directory and the
// processes' logs).
// Run (after `make build`): npx tsx bench/scale/main.ts
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { adminGrant, newToken, tokenSecret } from '../../src/api/tokens.js';
import { Informer, KubeClient, loadClusterConfig, resourcePath } from '../../src/kube/index.js';
import { adminKubeconfig } from '../../src/localcluster/index.js';
import {
  API_VERSION, EVENT, MAX_SESSIONS_ANNOTATION, NAMESPACE, POD, PROJECT, SANDBOX, SECRET, SESSION, TRIGGER, TRIGGER_FIRE,
  type KubeObject, type Project, type Session, type Trigger,
} from '../../src/resources/index.js';
import { signWebhookBody } from '../../src/triggers/index.js';
import { webhookManifest } from '../../test/helpers/manifests.js';
import { median, percentile, writeSection } from '../lib/report.js';
import { summarizeProfile } from './profile.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const N = Number(process.env.SVC_BENCH_SESSIONS ?? 5000);
const REST_SECONDS = Number(process.env.SVC_BENCH_REST_SECONDS ?? 30);
const LIST_RUNS = Number(process.env.SVC_BENCH_LIST_RUNS ?? 10);
const HOOKS = Number(process.env.SVC_BENCH_WEBHOOKS ?? 50);
const HOOK_RATE = 5;
const TIMEOUT_MS = Number(process.env.SVC_BENCH_TIMEOUT_SECONDS ?? 7200) * 1000;
const CPU_PROF = process.env.SVC_BENCH_CPU_PROF;
const HEAP_SNAPSHOT = process.env.SVC_BENCH_HEAP_SNAPSHOT;
const KEEP = process.env.SVC_BENCH_KEEP === '1';
/** POSTs in flight (the API takes one start at a time per namespace anyway). */
const CONCURRENCY = 8;
/** The namespace's cap: every session of the run fits. */
const CAP = N + 4 * HOOKS + 100;
const HOOK_SECRET = 'bench-scale-webhook-secret';
const NAMESPACE_NAME = 'default';
const SANDBOX_IMAGE = 'ghcr.io/svc-dev/svc-hollow-sandbox:bench';

const work = mkdtempSync(path.join(os.tmpdir(), 'svc-bench-scale-'));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (line: string) => process.stderr.write(`[scale ${new Date().toISOString().slice(11, 19)}] ${line}\n`);

// ------------------------------------------------------------------ processes

interface Proc { name: string; child: ChildProcess; pid: number; output: () => string }
const procs: Proc[] = [];

/** A child process whose output goes to WORK/<name>.log; resolves with the first match of `ready`. */
function start(name: string, args: string[], env: NodeJS.ProcessEnv, ready: RegExp): Promise<{ proc: Proc; match: RegExpExecArray }> {
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const file = createWriteStream(path.join(work, `${name}.log`));
  let head = '';
  let tail = '';
  const proc: Proc = { name, child, pid: child.pid!, output: () => `${head}\n...\n${tail}` };
  procs.push(proc);
  return new Promise((resolve, reject) => {
    let done = false;
    const take = (c: Buffer) => {
      file.write(c);
      const text = c.toString();
      if (head.length < 20_000) head += text;
      tail = (tail + text).slice(-4000);
      const m = done ? null : ready.exec(head);
      if (m) { done = true; resolve({ proc, match: m }); }
    };
    child.stdout!.on('data', take);
    child.stderr!.on('data', take);
    child.once('exit', (code) => { if (!done) reject(new Error(`${name} exited ${code}:\n${head}`)); });
  });
}

async function stopProc(proc: Proc, graceMs = 60_000): Promise<void> {
  if (proc.child.exitCode !== null || proc.child.signalCode !== null) return;
  const exited = new Promise((r) => proc.child.once('exit', r));
  proc.child.kill('SIGTERM');
  const timer = setTimeout(() => proc.child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** User + system CPU seconds of a process (/proc/<pid>/stat, clock ticks of 1/100 s). */
function cpuSeconds(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

function memory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN) / 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

interface Usage { cores: number; rss: number; peak: number }

/** CPU (cores) of each process over `seconds`, and its RSS at the end; the bench process as `bench`. */
async function usageOver(seconds: number): Promise<Record<string, Usage>> {
  const before = Object.fromEntries(procs.map((p) => [p.name, cpuSeconds(p.pid)]));
  const benchBefore = process.cpuUsage();
  await sleep(seconds * 1000);
  const out: Record<string, Usage> = {};
  for (const p of procs) out[p.name] = { cores: (cpuSeconds(p.pid) - before[p.name]!) / seconds, ...memory(p.pid) };
  const bench = process.cpuUsage(benchBefore);
  out.bench = { cores: (bench.user + bench.system) / 1e6 / seconds, rss: process.memoryUsage().rss / 2 ** 20, peak: NaN };
  return out;
}

// ------------------------------------------------------------------ operator metrics

interface OperatorSample { reconciles: Record<string, number>; waitSum: Record<string, number>; waitCount: Record<string, number>; runSum: Record<string, number>; depth: Record<string, number> }

async function operatorSample(metricsUrl: string): Promise<OperatorSample> {
  const text = await (await fetch(metricsUrl)).text();
  const sample: OperatorSample = { reconciles: {}, waitSum: {}, waitCount: {}, runSum: {}, depth: {} };
  const add = (into: Record<string, number>, key: string, value: number) => { into[key] = (into[key] ?? 0) + value; };
  for (const m of text.matchAll(/^svc_reconcile_total\{controller="([^"]+)",result="[^"]+"\} (\S+)$/gm)) add(sample.reconciles, m[1]!, Number(m[2]));
  for (const m of text.matchAll(/^svc_workqueue_queue_duration_seconds_sum\{controller="([^"]+)"\} (\S+)$/gm)) add(sample.waitSum, m[1]!, Number(m[2]));
  for (const m of text.matchAll(/^svc_workqueue_queue_duration_seconds_count\{controller="([^"]+)"\} (\S+)$/gm)) add(sample.waitCount, m[1]!, Number(m[2]));
  for (const m of text.matchAll(/^svc_reconcile_duration_seconds_sum\{controller="([^"]+)"\} (\S+)$/gm)) add(sample.runSum, m[1]!, Number(m[2]));
  for (const m of text.matchAll(/^svc_workqueue_depth\{controller="([^"]+)"\} (\S+)$/gm)) add(sample.depth, m[1]!, Number(m[2]));
  return sample;
}

interface ControllerRate { controller: string; perSecond: number; waitMs: number; runMs: number; depth: number }

/** The operator's V8 heap in use and the memory outside it (buffers), MiB. */
async function operatorHeap(metricsUrl: string): Promise<{ heap: number; external: number }> {
  const text = await (await fetch(metricsUrl)).text();
  const mib = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN) / 2 ** 20;
  return { heap: mib('svc_nodejs_heap_size_used_bytes'), external: mib('svc_nodejs_external_memory_bytes') };
}

/** Per controller over a window: reconciles/s, mean wait in the queue and run time, queue depth at the end. */
function controllerRates(a: OperatorSample, b: OperatorSample, seconds: number): ControllerRate[] {
  const delta = (field: keyof OperatorSample, controller: string) => (b[field][controller] ?? 0) - (a[field][controller] ?? 0);
  return Object.keys(b.reconciles).sort().map((controller) => {
    const count = delta('waitCount', controller);
    const runs = delta('reconciles', controller);
    return {
      controller,
      perSecond: runs / seconds,
      waitMs: count > 0 ? (delta('waitSum', controller) / count) * 1000 : 0,
      runMs: runs > 0 ? (delta('runSum', controller) / runs) * 1000 : 0,
      depth: b.depth[controller] ?? 0,
    };
  }).filter((r) => r.perSecond > 0 || r.depth > 0);
}

const rateLine = (rates: ControllerRate[]) =>
  rates.map((r) => `${r.controller} ${r.perSecond.toFixed(1)}/s (queue wait ${r.waitMs.toFixed(0)} ms, run ${r.runMs.toFixed(0)} ms, depth ${r.depth})`).join('; ');

// ------------------------------------------------------------------ requests

/** `runs` sequential GETs of the project's sessions: latency of each answered one, the count it listed, and the failures. */
async function listLatency(url: string, token: string, runs: number): Promise<{ ms: number[]; listed: number; errors: string[] }> {
  const ms: number[] = [];
  const errors: string[] = [];
  let listed = 0;
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    const text = await res.text();
    if (res.status !== 200) { errors.push(`${res.status} ${text.slice(0, 200)}`); continue; }
    ms.push(performance.now() - t);
    listed = ((JSON.parse(text) as { sessions?: unknown[] }).sessions ?? []).length;
  }
  return { ms, listed, errors };
}

/** Open loop: HOOKS signed deliveries at HOOK_RATE/s; receipt -> 202 latency of each. */
async function webhookLatency(url: string, tag: string): Promise<{ ms: number[]; errors: string[] }> {
  const ms: number[] = [];
  const errors: string[] = [];
  const started = performance.now();
  const inflight: Promise<void>[] = [];
  for (let i = 0; i < HOOKS; i++) {
    const wait = started + (i * 1000) / HOOK_RATE - performance.now();
    if (wait > 0) await sleep(wait);
    const body = JSON.stringify({ ref: 'refs/heads/main', n: `${tag}-${i}`, commits: [{ id: 'f'.repeat(40), message: 'bench' }] });
    inflight.push((async () => {
      const t = performance.now();
      try {
        const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-hub-signature-256': signWebhookBody(body, HOOK_SECRET) }, body });
        const text = await res.text();
        if (res.status === 202) ms.push(performance.now() - t);
        else errors.push(`${res.status} ${text.slice(0, 200)}`);
      } catch (error) {
        errors.push((error as Error).message);
      }
    })());
  }
  await Promise.all(inflight);
  return { ms, errors };
}

// ------------------------------------------------------------------ main

async function main(): Promise<void> {
  const loads: { at: string; load: number }[] = [];
  const noteLoad = (at: string) => loads.push({ at, load: os.loadavg()[0]! });
  noteLoad('start');

  // the project's repository: a bare one with svc.yaml (one agent, one webhook trigger) on main
  const seed = path.join(work, 'seed');
  const repo = path.join(work, 'repo.git');
  execFileSync('git', ['init', '-q', '-b', 'main', seed]);
  writeFileSync(path.join(seed, 'svc.yaml'), webhookManifest('bench {{ body.n }}'));
  execFileSync('git', ['add', '-A'], { cwd: seed });
  execFileSync('git', ['-c', 'user.name=b', '-c', 'user.email=b@b', 'commit', '-q', '-m', 'init'], { cwd: seed });
  execFileSync('git', ['clone', '-q', '--bare', seed, repo]);

  // the local cluster, in its own process
  const clusterDir = path.join(work, 'cluster');
  const cluster = await start('cluster', [path.join(ROOT, 'dist/src/localcluster/main.js'), '--data-dir', clusterDir, '--port', '0'], {}, /^(https:\/\/\S+)$/m);
  const access = { url: cluster.match[1]!, token: readFileSync(path.join(clusterDir, 'admin-token'), 'utf8').trim(), ca: readFileSync(path.join(clusterDir, 'serving.crt'), 'utf8') };
  const kubeconfig = path.join(work, 'kubeconfig');
  writeFileSync(kubeconfig, adminKubeconfig(access), { mode: 0o600 });
  await promisify(execFile)('kubectl', ['--kubeconfig', kubeconfig, 'apply', '-f', path.join(ROOT, 'crds')]);
  const client = new KubeClient(loadClusterConfig({ file: kubeconfig }), 'bench');
  await client.resource<KubeObject>(NAMESPACE).mergePatch('', NAMESPACE_NAME, { metadata: { annotations: { [MAX_SESSIONS_ANNOTATION]: String(CAP) } } });
  const apiToken = newToken();
  await client.resource<KubeObject>(SECRET).create(tokenSecret(apiToken, adminGrant(), NAMESPACE_NAME) as unknown as KubeObject);
  await client.resource<KubeObject>(SECRET).create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'bench-secrets', namespace: NAMESPACE_NAME }, data: { HOOK_SECRET: Buffer.from(HOOK_SECRET).toString('base64') } });

  // the node simulator (hollow pods), the API and the operator
  await start('node', ['--import', 'tsx', path.join(ROOT, 'bench/scale/node.ts')], {
    SCALE_CLUSTER_URL: access.url, SCALE_CLUSTER_TOKEN: access.token, SCALE_CLUSTER_CA: path.join(clusterDir, 'serving.crt'),
    SCALE_NODE_DIR: path.join(work, 'node'), SCALE_HOLLOW_OCTET: '91',
  }, /node ready/);
  const common = { KUBECONFIG: kubeconfig, SVC_NAMESPACE: NAMESPACE_NAME, SVC_PROJECT_NAMESPACE: NAMESPACE_NAME, SVC_ALLOW_LOCAL_REPOS: '1', SVC_MAX_CONCURRENT_SESSIONS: String(CAP), SVC_HTTP_HOST: '127.0.0.1', SVC_HTTP_PORT: '0' };
  const api = await start('api', [path.join(ROOT, 'dist/src/main/api.js')], {
    ...common, SVC_MIRROR_DIR: path.join(work, 'api-mirrors'), SVC_TRIGGER_QUEUE_DEPTH: String(CAP),
  }, /listening on (http:\/\/127\.0\.0\.1:\d+)/);
  const apiUrl = api.match[1]!;
  while (!(await fetch(`${apiUrl}/readyz`).then((r) => r.ok, () => false))) await sleep(100);
  const operator = await start('operator', [...(CPU_PROF ? ['--cpu-prof', '--cpu-prof-interval', '5000', '--cpu-prof-dir', path.resolve(CPU_PROF)] : []), ...(HEAP_SNAPSHOT ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${path.resolve(HEAP_SNAPSHOT)}`] : []), path.join(ROOT, 'dist/src/main/operator.js')], {
    ...common, SVC_POD_NAME: 'bench-operator', SVC_MIRROR_DIR: path.join(work, 'mirrors'),
    SVC_SANDBOX_PROVIDER: 'kubernetes', SVC_SANDBOX_IMAGE: SANDBOX_IMAGE, SVC_SANDBOX_API_URL: `${apiUrl}/v1`,
  }, /health on port (\d+)[\s\S]*: leading/);
  const metricsUrl = `http://127.0.0.1:${operator.match[1]}/metrics`;

  // the project, reconciled by the operator (its webhook Trigger made from svc.yaml)
  const project = await client.resource<Project>(PROJECT).create({ apiVersion: API_VERSION, kind: PROJECT.kind, metadata: { name: 'bench', namespace: NAMESPACE_NAME }, spec: { repoUrl: repo, defaultBranch: 'main' } });
  const projectId = project.metadata.uid!;
  for (const deadline = Date.now() + 60_000; ;) {
    const triggers = await client.resource<Trigger>(TRIGGER).list(NAMESPACE_NAME);
    if (triggers.items.some((t) => t.spec.slug === 'hook')) break;
    if (Date.now() > deadline) throw new Error(`the project's webhook trigger did not appear:\n${operator.proc.output()}`);
    await sleep(200);
  }
  const sessionsUrl = `${apiUrl}/v1/projects/${projectId}/sessions`;
  const hookUrl = `${apiUrl}/v1/webhooks/projects/${projectId}/hook`;
  const auth = { authorization: `Bearer ${apiToken}`, 'content-type': 'application/json' };
  for (const deadline = Date.now() + 30_000; ;) { // the API's caches have the trigger and the secret
    const res = await fetch(`${hookUrl}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    if (res.status === 401) break;
    if (Date.now() > deadline) throw new Error(`the webhook answers ${res.status}: ${await res.text()}`);
    await sleep(200);
  }

  // the bench's own view of the sessions (a watch): when each first shows running, stopped, failed
  const seen = { running: new Map<string, number>(), stopped: new Map<string, number>(), failed: new Map<string, string>() };
  const sessions = new Informer<Session>(client, SESSION, { namespace: NAMESPACE_NAME });
  const observe = (s: Session) => {
    const name = s.metadata.name!;
    const status = s.status?.status;
    if (status === 'running' && !seen.running.has(name)) seen.running.set(name, performance.now());
    if (status === 'stopped' && !seen.stopped.has(name)) seen.stopped.set(name, performance.now());
    if (status === 'failed' && !seen.failed.has(name)) seen.failed.set(name, `${s.status?.reason}: ${s.status?.conditions?.find((c) => c.type === 'Ready')?.message}`);
  };
  sessions.on('add', observe);
  sessions.on('update', observe);
  await sessions.start();

  // ---- the empty cluster
  log('empty cluster: at rest, GET sessions, webhooks');
  await sleep(5000);
  const emptyRest = await usageOver(Math.min(REST_SECONDS, 15));
  noteLoad('empty, at rest');
  const emptyList = await listLatency(sessionsUrl, apiToken, LIST_RUNS);
  const emptyHooks = await webhookLatency(hookUrl, 'empty');
  noteLoad('empty, webhooks');

  /** Waits until `done()`, logging progress every 10 s; false after TIMEOUT_MS or a stall of 10 minutes. */
  const waitUntil = async (what: () => string, done: () => boolean, count: () => number): Promise<boolean> => {
    const deadline = Date.now() + TIMEOUT_MS;
    let last = -1;
    let lastChange = Date.now();
    let cpu = cpuSeconds(operator.proc.pid);
    while (!done()) {
      await sleep(10_000);
      const now = cpuSeconds(operator.proc.pid);
      const n = count();
      if (n !== last) { last = n; lastChange = Date.now(); }
      log(`${what()}: ${n}; failed ${seen.failed.size}; operator ${((now - cpu) / 10 * 100).toFixed(0)}% of a core, ${memory(operator.proc.pid).rss.toFixed(0)} MiB; load ${os.loadavg()[0]!.toFixed(1)}`);
      cpu = now;
      if (Date.now() > deadline || Date.now() - lastChange > 600_000) return false;
    }
    return true;
  };
  // webhook sessions of the empty cluster are live too: wait for them
  await waitUntil(() => 'webhook sessions running', () => seen.running.size + seen.failed.size >= emptyHooks.ms.length, () => seen.running.size);

  // ---- N sessions
  log(`starting ${N} sessions`);
  const ids: string[] = [];
  const postMs: number[] = [];
  const postErrors: string[] = [];
  const startSample = await operatorSample(metricsUrl);
  const startedAt = performance.now();
  const cpuAtStart = Object.fromEntries(procs.map((p) => [p.name, cpuSeconds(p.pid)]));
  let next = 0;
  const posting = Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < N) {
      next++;
      const t = performance.now();
      try {
        const res = await fetch(sessionsUrl, { method: 'POST', headers: auth, body: '{}' });
        const body = (await res.json()) as { session?: { id: string }; error?: string };
        if (res.status !== 201 || !body.session) { postErrors.push(`${res.status} ${JSON.stringify(body).slice(0, 200)}`); continue; }
        ids.push(body.session.id);
        postMs.push(performance.now() - t);
      } catch (error) {
        postErrors.push((error as Error).message);
      }
    }
  }));
  let postedAllAt = NaN;
  void posting.then(() => { postedAllAt = performance.now(); });
  const allRunning = await waitUntil(() => `running (of ${ids.length} POSTed)`, () => !Number.isNaN(postedAllAt) && ids.every((id) => seen.running.has(id) || seen.failed.has(id)), () => ids.filter((id) => seen.running.has(id)).length);
  await posting;
  const startRates = controllerRates(startSample, await operatorSample(metricsUrl), (performance.now() - startedAt) / 1000);
  const postedMs = postedAllAt - startedAt;
  const tenth = Math.max(1, Math.floor(postMs.length / 10));
  const startMs = Math.max(...ids.map((id) => seen.running.get(id) ?? NaN).filter((t) => !Number.isNaN(t))) - startedAt;
  const running = ids.filter((id) => seen.running.has(id));
  const startCpu = Object.fromEntries(procs.map((p) => [p.name, cpuSeconds(p.pid) - cpuAtStart[p.name]!]));
  // the start rate by thousand: when the k-th session (in order of running) ran
  const order = running.map((id) => seen.running.get(id)! - startedAt).sort((a, b) => a - b);
  const marks = [0.1, 0.2, 0.5, 0.8, 1].map((f) => Math.max(1, Math.floor(f * order.length))).map((k) => ({ k, s: order[k - 1]! / 1000 }));
  noteLoad('after the start');

  // ---- at rest with N live sessions
  log(`${running.length} running; settling, then ${REST_SECONDS} s at rest`);
  await sleep(15_000);
  const m0 = await operatorSample(metricsUrl);
  const rest = await usageOver(REST_SECONDS);
  const m1 = await operatorSample(metricsUrl);
  noteLoad('at rest, N live');
  const fds = Object.fromEntries(procs.map((p) => [p.name, readdirSync(`/proc/${p.pid}/fd`).length]));
  const heap = await operatorHeap(metricsUrl);
  const maxFiles = /^Max open files\s+(\d+)/m.exec(readFileSync(`/proc/${operator.proc.pid}/limits`, 'utf8'))?.[1] ?? '?';
  if (HEAP_SNAPSHOT) {
    operator.proc.child.kill('SIGUSR2');
    await sleep(30_000);
  }
  const rates = controllerRates(m0, m1, REST_SECONDS);

  // ---- the API at that size
  log('GET sessions and webhooks at size');
  const fullList = await listLatency(sessionsUrl, apiToken, LIST_RUNS);
  const fullHooks = await webhookLatency(hookUrl, 'full');
  noteLoad('webhooks at size');

  // what the cluster holds at that size
  const objects: Record<string, number> = {};
  for (const [label, type] of [['Sessions', SESSION], ['Sandboxes', SANDBOX], ['Pods', POD], ['Secrets', SECRET], ['Events', EVENT], ['TriggerFires', TRIGGER_FIRE]] as const) {
    const res = await client.raw('GET', `${resourcePath(type, NAMESPACE_NAME)}?limit=1`);
    const list = JSON.parse(res.body) as { items: unknown[]; metadata: { remainingItemCount?: number } };
    objects[label] = list.items.length + (list.metadata.remainingItemCount ?? 0);
  }
  const clusterBytes = readdirSync(clusterDir).reduce((sum, f) => sum + statSync(path.join(clusterDir, f)).size, 0);

  // ---- stop-all: every running session (the webhook ones too)
  await sleep(5000);
  const live = [...seen.running.keys()].filter((id) => !seen.stopped.has(id));
  log(`stopping ${live.length} sessions`);
  const stopStarted = performance.now();
  const stopErrors: string[] = [];
  let s = 0;
  const stopping = Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (s < live.length) {
      const id = live[s++]!;
      const res = await fetch(`${sessionsUrl}/${id}/stop`, { method: 'POST', headers: auth }).catch((e: Error) => ({ status: 0, text: async () => e.message }));
      if (res.status !== 200) stopErrors.push(`${res.status} ${(await res.text()).slice(0, 200)}`);
    }
  }));
  let stopsSentAt = NaN;
  void stopping.then(() => { stopsSentAt = performance.now(); });
  const allStopped = await waitUntil(() => `stopped (of ${live.length})`, () => !Number.isNaN(stopsSentAt) && live.every((id) => seen.stopped.has(id)), () => live.filter((id) => seen.stopped.has(id)).length);
  await stopping;
  const stoppedCount = live.filter((id) => seen.stopped.has(id)).length;
  const stopMs = Math.max(...live.map((id) => seen.stopped.get(id) ?? NaN).filter((t) => !Number.isNaN(t))) - stopStarted;
  const stopSendMs = stopsSentAt - stopStarted;
  await sleep(15_000);
  const afterStop = await usageOver(Math.min(REST_SECONDS, 15));
  noteLoad('after the stop-all');

  await sessions.stop();
  for (const p of [...procs].reverse()) await stopProc(p);

  // where the operator's main thread spent its time (its profile is written as it exits)
  let profileText = '';
  if (CPU_PROF) {
    const file = readdirSync(CPU_PROF).find((f) => f.includes(`.${operator.proc.pid}.0.`) && f.endsWith('.cpuprofile'));
    if (file) {
      const p = summarizeProfile(path.join(CPU_PROF, file), {
        'its health polls (readDaemonHealth)': ['readDaemonHealth', 'src/lib/daemon-health.js'],
        'the Sandbox controller\'s ensureSandbox (the Pod GET, the health poll)': ['ensureSandbox', 'controllers/sandbox/controller.js'],
        'requests to the API server (KubeClient.raw)': ['raw', 'src/kube/client.js'],
        'git (runGit, the main thread\'s part)': ['runGit', 'src/git/exec.js'],
      });
      const pc = (v: number) => `${(v * 100).toFixed(0)}%`;
      profileText = `\n\nThe operator's main thread over the whole run (\`--cpu-prof\`, ${(p.seconds / 60).toFixed(0)} min): busy ${(p.busySeconds / 60).toFixed(1)} min; of that, ${Object.entries(p.inside).map(([k, v]) => `${pc(v)} in ${k}`).join(', ')} (these overlap). Most self time: ${p.top.slice(0, 6).map((t) => `${t.frame} ${pc(t.share)}`).join(', ')}.`;
    }
  }

  // ---- the section
  const f0 = (v: number) => (Number.isFinite(v) ? v.toFixed(0) : '–');
  const f1 = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : '–');
  const pct = (v: number) => `${(v * 100).toFixed(1)}%`;
  const lat = (xs: number[]) => `${f1(median(xs))} ms | ${f1(percentile(xs, 99))} ms`;
  const names: [string, string][] = [['operator', 'operator'], ['api', 'API'], ['cluster', 'local cluster (API server)'], ['node', 'node simulator (hollow daemons)'], ['bench', 'bench (its watch, the requests)']];
  const usageRows = names.map(([key, label]) => `| ${label} | ${pct(emptyRest[key]!.cores)}, ${f0(emptyRest[key]!.rss)} MiB | ${pct(rest[key]!.cores)}, ${f0(rest[key]!.rss)} MiB${key === 'bench' ? '' : ` (peak ${f0(rest[key]!.peak)})`} | ${pct(afterStop[key]!.cores)}, ${f0(afterStop[key]!.rss)} MiB |`).join('\n');
  const opRest = rest.operator!;
  const verdict = (ok: boolean) => (ok ? '**met**' : '**not met**');
  const markdown = `## scale: one operator, ${running.length.toLocaleString('en')} live sessions (hollow sandboxes)

${N.toLocaleString('en')} sessions POSTed to \`/v1/projects/:id/sessions\` (${CONCURRENCY} requests in flight) on one project, with the kubernetes
provider: a Secret and a Pod per sandbox, played by the node simulator as **hollow** sandboxes (image
\`svc-hollow-sandbox\`: no process; an in-process responder answers svc-agent's health, prompt and abort
contract at the Pod's address, src/localcluster/node/README.md). Every component in its own process, as the
chart runs them: the local cluster (\`dist/src/localcluster/main.js\`), the node simulator (bench/scale/node.ts),
the API (\`dist/src/main/api.js\`) and the operator (\`dist/src/main/operator.js\`, one replica, leading), all
on this machine's ${os.cpus().length} shared cores. Cap: namespace annotation \`${MAX_SESSIONS_ANNOTATION}: ${CAP}\`.
CPU = utime + stime from \`/proc/<pid>/stat\` over the window, RSS = \`VmRSS\`.

**Start**: the first POST → all ${running.length} \`running\` (seen by a watch): **${f1(startMs / 1000)} s, ${f1(running.length / (startMs / 1000))} sessions/s**${allRunning ? '' : ` (not all: ${ids.length} POSTed, ${running.length} running, ${seen.failed.size} failed when the bench gave up)`}.
Sessions running, by count and seconds after the first POST: ${marks.map((m) => `${m.k} at ${f0(m.s)} s`).join(', ')}; all ${ids.length} POSTs answered ${f1(postedMs / 1000)} s after the first; POST latency p50 ${f1(median(postMs))} ms, p99 ${f1(percentile(postMs, 99))} ms (the first tenth: p50 ${f1(median(postMs.slice(0, tenth)))} ms; the last: ${f1(median(postMs.slice(-tenth)))} ms)${postErrors.length ? `, ${postErrors.length} refused (${postErrors[0]})` : ''}.
The operator's controllers during the start: ${rateLine(startRates)}.
CPU spent during the start: operator ${f0(startCpu.operator!)} s, API ${f0(startCpu.api!)} s, local cluster ${f0(startCpu.cluster!)} s, node simulator ${f0(startCpu.node!)} s.

**At rest** (${REST_SECONDS} s, 15 s after the last start; the empty column: 15 s before any session):

| process | empty cluster: CPU, RSS | ${running.length} live sessions: CPU, RSS | after the stop-all: CPU, RSS |
|---|---|---|---|
${usageRows}

Operator at rest with ${running.length} live sessions: ${pct(opRest.cores)} of a core (target < 50%: ${verdict(opRest.cores < 0.5)}), ${f0(opRest.rss)} MiB RSS (target < 1 GiB: ${verdict(opRest.rss < 1024)}; V8 heap in use ${f0(heap.heap)} MiB, buffers ${f0(heap.external)} MiB).
Open file descriptors: ${names.filter(([key]) => key !== 'bench').map(([key, label]) => `${label} ${fds[key]}`).join(', ')} (their limit here: ${maxFiles}).
Its controllers during that window (reconciles/s, mean wait in the work queue, mean run, queue depth at the end):
${rateLine(rates)}.

What the cluster held then, in the namespace: ${Object.entries(objects).map(([k, v]) => `${v.toLocaleString('en')} ${k}`).join(', ')}; its data directory (journal and snapshot) ${f0(clusterBytes / 2 ** 20)} MiB.

**The API at that size**, next to the same on the empty cluster (same run):

| request | empty: p50 | p99 | ${running.length} live: p50 | p99 | × (p50) |
|---|---|---|---|---|---|
| \`GET /v1/projects/:id/sessions\` (${LIST_RUNS} sequential; listed ${emptyList.listed} / ${fullList.listed}) | ${lat(emptyList.ms)} | ${lat(fullList.ms)} | ${f1(median(fullList.ms) / median(emptyList.ms))}× |
| webhook receipt → 202 (${HOOKS} at ${HOOK_RATE}/s, each fires a session) | ${lat(emptyHooks.ms)} | ${lat(fullHooks.ms)} | ${f1(median(fullHooks.ms) / median(emptyHooks.ms))}× |
${emptyHooks.errors.length + fullHooks.errors.length ? `\nWebhook errors: ${emptyHooks.errors.length} empty, ${fullHooks.errors.length} at size (${[...emptyHooks.errors, ...fullHooks.errors][0]}).\n` : ''}${emptyList.errors.length + fullList.errors.length ? `\nGET sessions errors: ${emptyList.errors.length} empty, ${fullList.errors.length} at size (${[...emptyList.errors, ...fullList.errors][0]}).\n` : ''}
**Stop-all**: ${live.length} stops POSTed (${CONCURRENCY} in flight, sent in ${f1(stopSendMs / 1000)} s) → all \`stopped\`: **${f1(stopMs / 1000)} s** (${f1(stoppedCount / (stopMs / 1000))} sessions/s)${allStopped ? '' : ` (not all: ${stoppedCount} stopped when the bench gave up)`}${stopErrors.length ? `; ${stopErrors.length} stop errors (${stopErrors[0]})` : ''}.

${profileText.trim()}

Load average (1 min) during the run: ${loads.map((l) => `${l.at} ${l.load.toFixed(1)}`).join(', ')} (the machine is shared).`;
  console.log(markdown);
  writeSection('scale', markdown);
}

// Ctrl-C: the components go too
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    for (const p of procs) p.child.kill('SIGKILL');
    log(`${signal}: stopped; work directory kept: ${work}`);
    process.exit(130);
  });
}

main().then(() => {
  if (!KEEP) rmSync(work, { recursive: true, force: true });
  else log(`kept ${work}`);
}, async (error: unknown) => {
  console.error(error);
  for (const p of procs) console.error(`--- ${p.name}\n${p.output()}`);
  for (const p of [...procs].reverse()) await stopProc(p, 5000).catch(() => undefined);
  log(`work directory kept: ${work}`);
  process.exit(1);
});
