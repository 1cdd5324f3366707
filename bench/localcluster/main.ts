// bench/localcluster: create 1,000 custom resources and receive all 1,000 watch events, next to
// baselines measured in the same run:
//  - the same number of HTTP POSTs (same bodies, same concurrency) to a bare node https server (a bearer
//    token sent, as to the cluster, which authenticates every request) that
//    parses the JSON and answers it: the floor any HTTP API server has;
//  - the journal alone: the same 1,000 records appended with the same concurrency and fsync'd
//    (group commit): the cost of durability without HTTP.
// Also: startup time, empty and with the 1,000 objects to load, against a bare http server's listen.
// (The "200 Projects reconcile latency" part of this benchmark belongs to the Project controller.)
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { build } from 'esbuild';
import YAML from 'yaml';
import { clusterFetch, type ClusterFetch } from '../../src/localcluster/client.js';
import { startLocalCluster } from '../../src/localcluster/index.js';
import { servingCertificate } from '../../src/localcluster/tls.js';
import { Journal } from '../../src/localcluster/journal.js';
import { median, writeSection } from '../lib/report.js';

const N = 1000;
const CONCURRENCY = 32;
const RUNS = 3;
const CRD = YAML.parse(readFileSync(new URL('../../test/fixtures/localcluster/widget-crd.yaml', import.meta.url), 'utf8'));
const body = (i: number) => JSON.stringify({ apiVersion: 'test.svc.dev/v1', kind: 'Widget', metadata: { name: `w-${i}`, labels: { bench: 'yes' } }, spec: { size: 1 + (i % 100), tags: ['a', 'b'] } });

async function pool(n: number, worker: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < n) await worker(next++);
  }));
}

async function post(kube: ClusterFetch, urlPath: string, data: string): Promise<number> {
  const res = await kube(urlPath, { method: 'POST', headers: { 'content-type': 'application/json' }, body: data });
  await res.arrayBuffer();
  return res.status;
}

/** Resolves when `count` ADDED events arrived on the watch. */
async function watchFor(kube: ClusterFetch, urlPath: string, count: number): Promise<{ done: Promise<void>; abort: () => void }> {
  const controller = new AbortController();
  const res = await kube(urlPath, { signal: controller.signal });
  const reader = res.body!.getReader();
  const done = (async () => {
    const decoder = new TextDecoder();
    let buffered = '';
    let seen = 0;
    while (seen < count) {
      const { value, done: end } = await reader.read();
      if (end) throw new Error(`watch ended after ${seen} events`);
      buffered += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        if (buffered.slice(0, nl).startsWith('{"type":"ADDED"')) seen++;
        buffered = buffered.slice(nl + 1);
      }
    }
  })();
  return { done, abort: () => controller.abort() };
}

async function clusterRun(): Promise<{ createAndWatchMs: number; restartMs: number; emptyStartMs: number }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-bench-lc-'));
  try {
    let t0 = performance.now();
    let cluster = await startLocalCluster({ dataDir: dir });
    const emptyStartMs = performance.now() - t0;
    const kube = clusterFetch(cluster);
    await post(kube, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', JSON.stringify(CRD));
    const list = await (await kube('/apis/test.svc.dev/v1/namespaces/default/widgets')).json() as { metadata: { resourceVersion: string } };
    const watch = await watchFor(kube, `/apis/test.svc.dev/v1/namespaces/default/widgets?watch=1&resourceVersion=${list.metadata.resourceVersion}`, N);
    t0 = performance.now();
    await pool(N, async (i) => {
      const status = await post(kube, '/apis/test.svc.dev/v1/namespaces/default/widgets', body(i));
      if (status !== 201) throw new Error(`create ${i}: ${status}`);
    });
    await watch.done;
    const createAndWatchMs = performance.now() - t0;
    watch.abort();
    await cluster.close();
    t0 = performance.now();
    cluster = await startLocalCluster({ dataDir: dir });
    const restartMs = performance.now() - t0;
    await cluster.close();
    return { createAndWatchMs, restartMs, emptyStartMs };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function bareHttpRun(): Promise<{ roundTripsMs: number; listenMs: number }> {
  // https with a bearer token, as the cluster is reached (its certificate made beforehand, as the cluster's is)
  const certDir = mkdtempSync(path.join(os.tmpdir(), 'svc-bench-bare-'));
  const tls = servingCertificate(certDir);
  const t0 = performance.now();
  const server = https.createServer(tls, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const data = JSON.stringify(JSON.parse(Buffer.concat(chunks).toString()));
      res.writeHead(201, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) });
      res.end(data);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const listenMs = performance.now() - t0;
  const kube = clusterFetch({ url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, token: 'bench', ca: tls.cert.toString() });
  const t1 = performance.now();
  await pool(N, async (i) => { await post(kube, '/', body(i)); });
  const roundTripsMs = performance.now() - t1;
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  rmSync(certDir, { recursive: true, force: true });
  return { roundTripsMs, listenMs };
}

async function journalRun(): Promise<number> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-bench-journal-'));
  try {
    const journal = Journal.open(dir, { records: 0, bytes: 0 }, () => undefined, () => ({ rv: 0, objects: new Map() }));
    const t0 = performance.now();
    await pool(N, async (i) => journal.append({ rv: i + 1, k: `test.svc.dev/widgets/default/w-${i}`, obj: JSON.parse(body(i)) }));
    const ms = performance.now() - t0;
    await journal.close();
    return ms;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Spawns `node args`, resolves with the ms until its first stdout line, then kills it. */
async function timeToFirstLine(args: string[]): Promise<number> {
  const t0 = performance.now();
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise((resolve) => createInterface({ input: child.stdout }).once('line', resolve));
  const elapsed = performance.now() - t0;
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
  return elapsed;
}

async function processStart(): Promise<{ cluster: number; bare: number }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-bench-lc-proc-'));
  try {
    const entry = path.join(dir, 'main.mjs');
    await build({ entryPoints: [new URL('../../src/localcluster/main.ts', import.meta.url).pathname], bundle: true, platform: 'node', format: 'esm', outfile: entry, logLevel: 'error' });
    const cluster: number[] = [];
    const bare: number[] = [];
    for (let i = 0; i < 5; i++) {
      cluster.push(await timeToFirstLine([entry, '--data-dir', path.join(dir, 'data'), '--port', '0']));
      bare.push(await timeToFirstLine(['-e', "require('http').createServer().listen(0, '127.0.0.1', () => console.log('up'))"]));
    }
    return { cluster: median(cluster), bare: median(bare) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const proc = await processStart();
const results = { cluster: [] as number[], http: [] as number[], journal: [] as number[], restart: [] as number[], start: [] as number[], listen: [] as number[] };
for (let r = 0; r < RUNS; r++) {
  const c = await clusterRun();
  const h = await bareHttpRun();
  results.cluster.push(c.createAndWatchMs);
  results.restart.push(c.restartMs);
  results.start.push(c.emptyStartMs);
  results.http.push(h.roundTripsMs);
  results.listen.push(h.listenMs);
  results.journal.push(await journalRun());
}

const ms = (v: number) => `${v.toFixed(1)} ms`;
const m = Object.fromEntries(Object.entries(results).map(([k, v]) => [k, median(v)])) as Record<keyof typeof results, number>;
const markdown = `## localcluster: 1,000 custom resources created and watched

Median of ${RUNS} runs; ${N} \`Widget\` creates (schema-validated, defaulted, journaled and fsync'd
before the 201) over ${CONCURRENCY} concurrent keep-alive connections from the same process, timed
until the watch opened beforehand has delivered all ${N} ADDED events.

| measure | time | baseline | ratio |
|---|---|---|---|
| create ${N} + receive ${N} watch events | ${ms(m.cluster)} (${(m.cluster / N).toFixed(2)} ms/object) | ${N} POSTs to a bare node http server that parses and echoes the JSON: ${ms(m.http)} | ${(m.cluster / m.http).toFixed(1)}× |
| of which durability | | the journal alone, ${N} records appended ${CONCURRENCY} at a time with group-committed fdatasync: ${ms(m.journal)} | ${(m.journal / m.cluster * 100).toFixed(0)}% of the total |
| startup, empty data dir | ${ms(m.start)} | bare http server listen: ${ms(m.listen)} | ${(m.start / m.listen).toFixed(1)}× |
| process start until the URL is printed (\`node main.js --data-dir\`, bundled) | ${ms(proc.cluster)} | \`node -e\` starting a bare http server: ${ms(proc.bare)} | ${(proc.cluster / proc.bare).toFixed(1)}× |
| restart with ${N} objects + CRD to load | ${ms(m.restart)} | bare http server listen: ${ms(m.listen)} | ${(m.restart / m.listen).toFixed(1)}× |

The bare server is the floor for any HTTP API in Node on this machine; the difference is the local
cluster's own work (validation, defaulting, storage, watch fan-out) plus the fsync. The in-process
startup rows exclude Node's own boot and module loading; the process row includes them.

The "200 Projects: create → status written" reconcile latency of this benchmark is measured by the
Project controller's benchmark (it needs the operator), not here.
`;
console.log(markdown);
writeSection('localcluster', markdown);
