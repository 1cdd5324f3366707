// svc-agent proxy overhead (issue 5): requests/s, p50/p99 latency and time to the first SSE event
// through the daemon next to direct requests to the same upstream, in one run. Two upstreams: the
// engine the daemon exists for (the pinned opencode binary, offline) and a trivial Node server
// behind /proxy/{port}, the worst case, shown next to a minimal Node proxy without authentication.
// Every request carries its own signed X-Svc-User-Context on every path (signed before the timed
// window), so the load generator does the same work whichever path it measures.
import { rmSync, existsSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { writeSection, median, percentile } from '../lib/report.js';
import { REPO_ROOT, cleanupArtifacts, freePort, sign, startDaemon, tempDir } from '../../test/daemon/harness.js';
import { REFERENCE_PROXY, TRIVIAL_UPSTREAM, cpuSeconds, findEngine, startScript } from './processes.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const CONNECTIONS = 10;
const ROUNDS = 2;
/** seconds of load per route before measuring (opencode's JIT needs a few) */
const WARM_UP_SECONDS = 3;
const LATENCY_REQUESTS = 2000;
const SSE_RUNS = 30;
const OPENCODE = path.join(REPO_ROOT, 'node_modules', '.bin', 'opencode');

/** One way to reach an upstream, and whose CPU to count for it. */
interface Route {
  name: string;
  url: string;
  /** headers besides the context header (the engine's password on the direct engine path) */
  headers: Record<string, string>;
  /** whether the daemon checks the header (needs a fresh, unreplayed one per request) */
  viaDaemon: boolean;
  /** processes doing the work, beside the load generator: role -> CPU seconds so far */
  cpu: Record<string, () => number>;
}

interface Throughput { rps: number; cpuMicros: Record<string, number> }

// Signed headers: the daemon accepts each nonce once. Direct paths reuse the pool (nobody checks).
let pool: string[] = [];
let next = 0;
function refillPool(size: number): void {
  pool = Array.from({ length: size }, () => sign('*'));
  next = 0;
}
const nextHeader = (fresh: boolean) => (fresh ? pool[next++] ?? sign('*') : pool[next++ % pool.length]!);

async function throughput(route: Route, seconds: number): Promise<Throughput> {
  // the daemon needs unused headers; direct paths reuse whatever pool there is (but never none)
  if (route.viaDaemon || pool.length === 0) refillPool(Math.ceil(seconds * 60_000));
  const before = Object.fromEntries(Object.entries(route.cpu).map(([role, read]) => [role, read()]));
  const loadBefore = process.cpuUsage();
  const result = await autocannon({
    url: route.url,
    connections: CONNECTIONS,
    duration: seconds,
    requests: [{ setupRequest: (req) => ({ ...req, headers: { ...req.headers, ...route.headers, 'x-svc-user-context': nextHeader(route.viaDaemon) } }) }],
  });
  if (result.non2xx || result.errors) throw new Error(`${route.name}: ${result.non2xx} non-2xx answers and ${result.errors} errors`);
  const load = process.cpuUsage(loadBefore);
  const total = result.requests.total;
  const cpuMicros: Record<string, number> = { 'load generator': (load.user + load.system) / total };
  for (const [role, read] of Object.entries(route.cpu)) cpuMicros[role] = ((read() - before[role]!) * 1e6) / total;
  return { rps: total / seconds, cpuMicros };
}

/** Alternating rounds over all routes (warm-up first), averaged per route. */
async function compare(routes: Route[]): Promise<Throughput[]> {
  for (const r of routes) await throughput(r, WARM_UP_SECONDS);
  const runs: Throughput[][] = routes.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? routes.map((_, i) => i) : routes.map((_, i) => routes.length - 1 - i);
    for (const i of order) runs[i]!.push(await throughput(routes[i]!, SECONDS / ROUNDS));
  }
  return runs.map((rs) => ({
    rps: rs.reduce((s, r) => s + r.rps, 0) / rs.length,
    cpuMicros: Object.fromEntries(Object.keys(rs[0]!.cpuMicros).map((k) => [k, rs.reduce((s, r) => s + r.cpuMicros[k]!, 0) / rs.length])),
  }));
}

/** Sequential requests over one keep-alive connection: p50 and p99 in ms. */
async function latency(route: Route): Promise<{ p50: number; p99: number }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const once = (header: string) => new Promise<number>((resolve, reject) => {
    const started = performance.now();
    http.get(route.url, { agent, headers: { ...route.headers, 'x-svc-user-context': header } }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`${route.name}: ${res.statusCode}`));
      res.resume();
      res.on('end', () => resolve(performance.now() - started));
    }).on('error', reject);
  });
  const times: number[] = [];
  for (let i = 0; i < LATENCY_REQUESTS + 200; i++) {
    const t = await once(sign('*'));
    if (i >= 200) times.push(t);
  }
  agent.destroy();
  return { p50: percentile(times, 50), p99: percentile(times, 99) };
}

/** A new request to an SSE endpoint until its first chunk, median of SSE_RUNS. */
async function firstEvent(url: string, headers: Record<string, string>, viaDaemon: boolean): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < SSE_RUNS; i++) {
    const started = performance.now();
    const controller = new AbortController();
    const res = await fetch(url, { headers: viaDaemon ? { ...headers, 'x-svc-user-context': sign('*') } : headers, signal: controller.signal });
    const reader = res.body!.getReader();
    await reader.read();
    times.push(performance.now() - started);
    controller.abort();
    await reader.cancel().catch(() => undefined);
  }
  return median(times);
}

async function main(): Promise<void> {
  if (!existsSync(OPENCODE)) throw new Error(`${OPENCODE} is missing: make install puts the pinned opencode-ai there`);
  const upstream = await startScript(TRIVIAL_UPSTREAM);
  const reference = await startScript(REFERENCE_PROXY, String(upstream.port));
  const dirs = { workspace: tempDir('bench-ws'), home: tempDir('bench-home') };
  const enginePort = await freePort();
  const daemon = await startDaemon(dirs, {
    SVC_ENGINE_COMMAND: `'${OPENCODE}' serve --hostname 127.0.0.1 --port {port}`,
    SVC_ENGINE_PORT: String(enginePort),
    SVC_ENGINE_BOOT_TIMEOUT_MS: '90000',
    // as in a jail or a Pod: the upstream plays a program of the sandbox (daemon/own-ports.ts)
    SVC_SANDBOX_OWN_NETWORK: '1',
  });
  try {
    await daemon.waitFor((h) => h.engine.state === 'ready', 'engine ready', 90_000);
    const engine = findEngine(daemon.process.pid!);
    const engineAuth = { authorization: `Basic ${Buffer.from(`opencode:${engine.password}`).toString('base64')}` };
    const daemonCpu = () => cpuSeconds(daemon.process.pid!);
    const engineCpu = () => cpuSeconds(engine.pid, true);
    const upstreamCpu = () => cpuSeconds(upstream.child.pid!);

    const engineRoutes: Route[] = [
      { name: 'direct', url: `http://127.0.0.1:${enginePort}/global/health`, headers: engineAuth, viaDaemon: false, cpu: { upstream: engineCpu } },
      { name: 'through svc-agent', url: `${daemon.url}/global/health`, headers: {}, viaDaemon: true, cpu: { upstream: engineCpu, proxy: daemonCpu } },
    ];
    const trivialRoutes: Route[] = [
      { name: 'direct', url: `http://127.0.0.1:${upstream.port}/`, headers: {}, viaDaemon: false, cpu: { upstream: upstreamCpu } },
      { name: 'through svc-agent `/proxy/{port}/`', url: `${daemon.url}/proxy/${upstream.port}/`, headers: {}, viaDaemon: true, cpu: { upstream: upstreamCpu, proxy: daemonCpu } },
      { name: 'through the minimal node:http proxy (no auth)', url: `http://127.0.0.1:${reference.port}/`, headers: {}, viaDaemon: false, cpu: { upstream: upstreamCpu, proxy: () => cpuSeconds(reference.child.pid!) } },
    ];
    const engineRates = await compare(engineRoutes);
    const trivialRates = await compare(trivialRoutes);
    const engineLatency = [await latency(engineRoutes[0]!), await latency(engineRoutes[1]!)];
    const trivialLatency = [await latency(trivialRoutes[0]!), await latency(trivialRoutes[1]!)];
    const sse = {
      engine: [await firstEvent(`http://127.0.0.1:${enginePort}/event`, engineAuth, false), await firstEvent(`${daemon.url}/event`, {}, true)],
      trivial: [await firstEvent(`http://127.0.0.1:${upstream.port}/events`, {}, false), await firstEvent(`${daemon.url}/proxy/${upstream.port}/events`, {}, true)],
    };

    const pct = (n: number) => `${(n * 100).toFixed(0)}%`;
    const ms = (n: number) => `${n.toFixed(3)} ms`;
    const plusMs = (n: number) => `${n < 0 ? '−' : '+'}${ms(Math.abs(n))}`;
    const us = (n: number | undefined) => (n === undefined ? '–' : n.toFixed(1));
    const rateRows = (label: string, routes: Route[], rates: Throughput[]) => routes.map((r, i) => {
      const c = rates[i]!.cpuMicros;
      return `| ${i === 0 ? label : ''} | ${r.name} | ${rates[i]!.rps.toFixed(0)} | ${pct(rates[i]!.rps / rates[0]!.rps)} | ${us(c['load generator'])} / ${us(c.upstream)} / ${us(c.proxy)} |`;
    }).join('\n');
    const engineRatio = engineRates[1]!.rps / engineRates[0]!.rps;
    const trivialRatio = trivialRates[1]!.rps / trivialRates[0]!.rps;
    const referenceRatio = trivialRates[2]!.rps / trivialRates[0]!.rps;
    const addedEngine = engineLatency[1]!.p50 - engineLatency[0]!.p50;
    const addedTrivial = trivialLatency[1]!.p50 - trivialLatency[0]!.p50;
    const verdict = (ok: boolean) => (ok ? 'met' : '**missed**');
    const daemonMicros = trivialRates[1]!.cpuMicros.proxy!;
    const upstreamMicros = trivialRates[0]!.cpuMicros.upstream!;

    const markdown = `## Daemon proxy (svc-agent)

Requests through svc-agent next to the same requests sent directly, in one run. Two upstreams:
**the engine** (the pinned opencode 1.18.33, offline, \`GET /global/health\`; direct requests carry
the engine's password, read from its environment), which is what the daemon fronts; and **a
trivial Node server** answering \`200 ok\` (its own process) behind \`/proxy/{port}/\`, the worst
case, also measured through a minimal node:http proxy without authentication. Every request on
every path carries its own signed \`X-Svc-User-Context\` (signed before the timed window), so the
load generator does the same work on each path; the daemon verifies it and strips it.
Load generator, daemon and upstream share the machine's 2 cores. Throughput: autocannon,
${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${SECONDS / ROUNDS} s per path after a ${WARM_UP_SECONDS} s warm-up.
CPU per request: user + system time of each process over the run (/proc), divided by requests.

| upstream | path | requests/s | of direct | CPU µs per request: load generator / upstream / proxy |
|---|---|---|---|---|
${rateRows('engine (opencode)', engineRoutes, engineRates)}
${rateRows('trivial `200 ok`', trivialRoutes, trivialRates)}

| upstream | latency, one connection, ${LATENCY_REQUESTS} sequential requests | direct | through svc-agent | added |
|---|---|---|---|---|
| engine | p50 | ${ms(engineLatency[0]!.p50)} | ${ms(engineLatency[1]!.p50)} | ${plusMs(addedEngine)} |
| engine | p99 | ${ms(engineLatency[0]!.p99)} | ${ms(engineLatency[1]!.p99)} | ${plusMs(engineLatency[1]!.p99 - engineLatency[0]!.p99)} |
| trivial | p50 | ${ms(trivialLatency[0]!.p50)} | ${ms(trivialLatency[1]!.p50)} | ${plusMs(addedTrivial)} |
| trivial | p99 | ${ms(trivialLatency[0]!.p99)} | ${ms(trivialLatency[1]!.p99)} | ${plusMs(trivialLatency[1]!.p99 - trivialLatency[0]!.p99)} |
| engine \`/event\` | time to first SSE event (median of ${SSE_RUNS}) | ${ms(sse.engine[0]!)} | ${ms(sse.engine[1]!)} | ${plusMs(sse.engine[1]! - sse.engine[0]!)} |
| trivial \`/events\` | time to first SSE event (median of ${SSE_RUNS}) | ${ms(sse.trivial[0]!)} | ${ms(sse.trivial[1]!)} | ${plusMs(sse.trivial[1]! - sse.trivial[0]!)} |

| target (issue 5) | measured | verdict |
|---|---|---|
| ≥ 70% of direct throughput, to the engine | ${pct(engineRatio)} | ${verdict(engineRatio >= 0.7)} |
| < 2 ms added p50 | engine ${plusMs(addedEngine)}, trivial ${plusMs(addedTrivial)} | ${verdict(addedEngine < 2 && addedTrivial < 2)} |
| ≥ 70% of direct throughput, to the trivial upstream | ${pct(trivialRatio)} (the minimal Node proxy: ${pct(referenceRatio)}) | not reachable by a Node proxy on this machine, see below |

Why the trivial upstream cannot reach 70% here: the daemon spends ${us(daemonMicros)} µs of CPU per
request (HTTP server, signature check, HTTP client) where the trivial upstream spends
${us(upstreamMicros)} µs; a proxy does at least the upstream's HTTP work again, and all three
processes share 2 cores. A minimal Node proxy with no checks at all gets ${pct(referenceRatio)}
(${us(trivialRates[2]!.cpuMicros.proxy)} µs per request); only a native proxy could do much better.
With an upstream that does real work, as the engine does, the proxy's share shrinks; the
engine row is the one the target is judged on (docs/daemon.md). opencode's own rate moves by
about 20% from run to run and is low for its first seconds under load (hence the warm-up; with a
1 s warm-up the direct engine run that came first was slower than the one through the daemon).`;
    console.log(markdown);
    writeSection('daemon-proxy', markdown);
  } finally {
    await daemon.stop();
    upstream.child.kill();
    reference.child.kill();
    rmSync(dirs.workspace, { recursive: true, force: true });
    rmSync(dirs.home, { recursive: true, force: true });
    cleanupArtifacts();
  }
}

await main();
