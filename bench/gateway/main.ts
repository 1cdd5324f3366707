// Model gateway overhead (issue 21): a streamed chat completion relayed through the gateway
// (`svc dev`, a real session's key, usage counted and written to the cluster) next to the same
// request sent straight to the upstream, in one run: time to the first byte and to the end (p50,
// p99, one request at a time, the two paths alternating), and requests/s with 20 concurrent
// streams. The gateway's request is the common case it has the most work for: a stream that does
// not ask for its usage (the gateway asks, counts it, and takes it out again).
// Run (after `make build`): npx tsx bench/gateway/main.ts
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { median, percentile, writeSection } from '../lib/report.js';
import { buildArtifacts } from '../../test/daemon/harness.js';
import { fixtureEngineArgs, REPO_ROOT, removeDevDir, startDev, type DevInstance } from '../../test/helpers/dev.js';
import { makeRepo } from '../../test/dev/util.js';

const LATENCY_REQUESTS = Number(process.env.BENCH_GATEWAY_REQUESTS ?? 400);
const WARM_UP = 100;
const CONCURRENT = 20;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const ROUNDS = 2;
const TARGET_MS = 2;
const BODY = JSON.stringify({ model: 'bench-1', stream: true, messages: [{ role: 'user', content: 'Write a haiku about relays.' }] });

interface Path { name: string; url: string; headers: Record<string, string>; agent: http.Agent }
interface Timing { firstByte: number; end: number }

function once(route: Path): Promise<Timing> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let firstByte = 0;
    const req = http.request(route.url, { method: 'POST', agent: route.agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(BODY), ...route.headers } }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`${route.name}: ${res.statusCode}`));
      res.on('data', () => { if (!firstByte) firstByte = performance.now() - started; });
      res.on('end', () => resolve({ firstByte, end: performance.now() - started }));
    });
    req.on('error', reject);
    req.end(BODY);
  });
}

async function latencies(routes: Path[]): Promise<Timing[][]> {
  for (let i = 0; i < WARM_UP; i++) for (const r of routes) await once(r);
  const timings: Timing[][] = routes.map(() => []);
  for (let i = 0; i < LATENCY_REQUESTS; i++) {
    const order = i % 2 === 0 ? routes.map((_, k) => k) : routes.map((_, k) => routes.length - 1 - k);
    for (const k of order) timings[k]!.push(await once(routes[k]!));
  }
  return timings;
}

async function rate(route: Path, seconds: number): Promise<number> {
  const result = await autocannon({
    url: route.url, method: 'POST', connections: CONCURRENT, duration: seconds, body: BODY,
    headers: { 'content-type': 'application/json', ...route.headers },
  });
  if (result.non2xx || result.errors) throw new Error(`${route.name}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return result.requests.total / seconds;
}

async function rates(routes: Path[]): Promise<number[]> {
  for (const r of routes) await rate(r, 2); // warm-up
  const runs: number[][] = routes.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? routes.map((_, k) => k) : routes.map((_, k) => routes.length - 1 - k);
    for (const k of order) runs[k]!.push(await rate(routes[k]!, SECONDS / ROUNDS));
  }
  return runs.map((r) => r.reduce((a, b) => a + b, 0) / r.length);
}

async function startUpstream(): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'bench/gateway/upstream.mjs')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.on('data', (c: Buffer) => { const m = /listening (\d+)/.exec(c.toString()); if (m) resolve(Number(m[1])); });
    child.once('exit', (code) => reject(new Error(`upstream exited ${code}`)));
  });
  return { child, port };
}

async function api(dev: DevInstance, method: string, urlPath: string, body?: unknown): Promise<any> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const res = await fetch(`${dev.apiUrl}${urlPath}`, {
    method, headers: { authorization: `Bearer ${dev.token}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${urlPath}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : {};
}

const ms = (v: number) => v.toFixed(2);

async function main(): Promise<void> {
  const upstream = await startUpstream();
  const { fixtureEngine } = await buildArtifacts();
  const dev = await startDev({ args: [...fixtureEngineArgs(fixtureEngine), '--idle-timeout', '2h'] });
  try {
    const repo = path.join(dev.dataDir, 'repo');
    makeRepo(repo, { 'README.md': '# bench\n' });
    const { project } = await api(dev, 'POST', '/projects', { name: 'bench', repo_url: repo });
    await api(dev, 'PUT', `/projects/${project.id}/gateway/providers/bench`, { api_key: 'sk-bench', base_url: `http://127.0.0.1:${upstream.port}/v1` });
    const { session } = await api(dev, 'POST', `/projects/${project.id}/sessions`, {});
    for (let i = 0; ; i++) {
      if ((await api(dev, 'GET', `/projects/${project.id}/sessions/${session.id}`)).session.status === 'running') break;
      if (i > 600) throw new Error('the session did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
    const env = await api(dev, 'GET', `/projects/${project.id}/sessions/${session.id}/engine/fixture/env`);
    const routes: Path[] = [
      { name: 'direct', url: `http://127.0.0.1:${upstream.port}/v1/chat/completions`, headers: { authorization: 'Bearer sk-bench' }, agent: new http.Agent({ keepAlive: true, maxSockets: 1 }) },
      { name: 'gateway', url: `${env.SVC_LLM_BASE_URL}/bench/chat/completions`, headers: { authorization: `Bearer ${env.SVC_LLM_API_KEY}` }, agent: new http.Agent({ keepAlive: true, maxSockets: 1 }) },
    ];
    const [direct, gateway] = await latencies(routes);
    const [directRate, gatewayRate] = await rates(routes);
    // the API's own ceiling on this machine: a route that does nothing (no token, no body)
    const healthz = (await autocannon({ url: dev.apiUrl.replace(/\/v1$/, '/healthz'), connections: CONCURRENT, duration: SECONDS / ROUNDS })).requests.total / (SECONDS / ROUNDS);
    const stats = (t: Timing[], key: keyof Timing) => ({ p50: median(t.map((x) => x[key])), p99: percentile(t.map((x) => x[key]), 99) });
    const d1 = stats(direct!, 'firstByte');
    const g1 = stats(gateway!, 'firstByte');
    const dEnd = stats(direct!, 'end');
    const gEnd = stats(gateway!, 'end');
    const added = g1.p50 - d1.p50;
    const usage = await api(dev, 'GET', `/projects/${project.id}/gateway/usage?group_by=session`);
    const table = [
      '| path | first byte p50 | first byte p99 | end p50 | end p99 | requests/s, 20 concurrent streams |',
      '|---|---|---|---|---|---|',
      `| straight to the upstream | ${ms(d1.p50)} ms | ${ms(d1.p99)} ms | ${ms(dEnd.p50)} ms | ${ms(dEnd.p99)} ms | ${directRate.toFixed(0)} |`,
      `| through the gateway | ${ms(g1.p50)} ms | ${ms(g1.p99)} ms | ${ms(gEnd.p50)} ms | ${ms(gEnd.p99)} ms | ${gatewayRate.toFixed(0)} |`,
      `| gateway added | **${ms(added)} ms** | ${ms(g1.p99 - d1.p99)} ms | ${ms(gEnd.p50 - dEnd.p50)} ms | ${ms(gEnd.p99 - dEnd.p99)} ms | ${(100 * gatewayRate / directRate).toFixed(0)}% of direct |`,
      `| (the API's \`GET /healthz\`, for scale) | | | | | ${healthz.toFixed(0)} |`,
    ].join('\n');
    const markdown = `## Model gateway (\`bench/gateway\`)

A streamed chat completion (${process.env.UPSTREAM_CHUNKS ?? 16} content chunks, answered at once by a Node
upstream in its own process) through \`svc dev\`'s API with a running session's \`SVC_LLM_API_KEY\`,
next to the same request straight to the upstream. The client does not ask for the stream's usage,
so the gateway adds \`stream_options.include_usage\`, counts the usage and takes it out again; every
request is recorded in the cluster (${usage.total.requests} requests counted in this run). Latency: ${LATENCY_REQUESTS}
requests one at a time per path, alternating (after ${WARM_UP} each to warm up); throughput: autocannon,
${CONCURRENT} connections, ${SECONDS} s per path in ${ROUNDS} alternating rounds.

${table}

Target: the gateway adds at most ${TARGET_MS} ms at p50 to the first byte: **${added <= TARGET_MS ? 'met' : 'not met'}** (${ms(added)} ms).

The rate is far below the direct one because the upstream does nothing: every relayed stream costs
the API an HTTP request in and one out, the stream parsed event by event, metrics, and (batched every
200 ms) the usage written to the cluster, on the same two shared cores as the load generator, the
upstream and the local cluster. The API's \`GET /healthz\`, which does nothing at all, is the ceiling
shown beside it; a model answers in seconds, so a replica's rate is far above what its sessions ask of it.`;
    writeSection('gateway', markdown);
    process.stdout.write(`${markdown}\n`);
  } finally {
    await dev.stop();
    upstream.child.kill();
    removeDevDir(dev.dataDir);
  }
}

main().catch((error: Error) => { console.error(error); process.exit(1); });
