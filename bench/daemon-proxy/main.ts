// svc-agent proxy overhead: requests/s and p50/p99 latency through the daemon's /proxy/{port}
// next to direct requests to the same upstream in the same run (autocannon), plus the time to the
// first SSE event. Targets (issue 5): >= 70% of direct throughput, < 2 ms added p50.
// Every proxied request carries its own signed X-Svc-User-Context (a nonce is accepted once); the
// headers are signed before the timed window, and the upstream runs in a process of its own, so
// the load generator's costs do not count against the daemon.
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
type Result = Awaited<ReturnType<typeof autocannon>>;
import { writeSection, median } from '../lib/report.js';
import { cleanupArtifacts, sign, startDaemon, tempDir } from '../../test/daemon/harness.js';

const THROUGHPUT_SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = 10;
const SSE_RUNS = 30;

async function main(): Promise<void> {
  const { upstream, port } = await startUpstream();
  const dirs = { workspace: tempDir('bench-ws'), home: tempDir('bench-home') };
  const daemon = await startDaemon(dirs);
  try {
    await daemon.waitFor((h) => h.engine.state === 'ready', 'engine ready');
    const direct = `http://127.0.0.1:${port}`;
    const proxied = `${daemon.url}/proxy/${port}`;
    // enough signed headers for the fastest run; each is sent once (the daemon refuses a replayed nonce)
    const pool: string[] = [];
    const refill = (n: number) => { pool.length = 0; for (let i = 0; i < n; i++) pool.push(sign(`proxy:${port}`)); };
    let next = 0;
    const signedRequest = (path: string) => {
      refill(Math.max(20_000, Math.ceil(THROUGHPUT_SECONDS * 40_000)));
      next = 0;
      return [{ path, setupRequest: (req: { headers?: Record<string, string> }) => ({ ...req, headers: { ...req.headers, 'x-svc-user-context': pool[next++] ?? sign(`proxy:${port}`) } }) }];
    };
    const run = (url: string, connections: number, duration: number, viaDaemon: boolean) =>
      autocannon({ url, connections, duration, requests: viaDaemon ? signedRequest(new URL(url).pathname + '/') : undefined });

    // warm both paths, then alternate so neither always runs on a colder machine
    await run(direct, CONNECTIONS, 1, false);
    await run(proxied, CONNECTIONS, 1, true);
    const load = { direct: [] as Result[], proxied: [] as Result[] };
    const single = { direct: [] as Result[], proxied: [] as Result[] };
    for (let round = 0; round < 2; round++) {
      load.proxied.push(await run(proxied, CONNECTIONS, THROUGHPUT_SECONDS / 2, true));
      load.direct.push(await run(direct, CONNECTIONS, THROUGHPUT_SECONDS / 2, false));
      single.direct.push(await run(direct, 1, 2, false));
      single.proxied.push(await run(proxied, 1, 2, true));
    }
    for (const r of [...load.direct, ...load.proxied, ...single.direct, ...single.proxied]) {
      if (r.non2xx || r.errors) throw new Error(`bench run had ${r.non2xx} non-2xx answers and ${r.errors} errors`);
    }
    const avg = (rs: Result[], pick: (r: Result) => number) => rs.reduce((s, r) => s + pick(r), 0) / rs.length;
    const rps = { direct: avg(load.direct, (r) => r.requests.average), proxied: avg(load.proxied, (r) => r.requests.average) };
    const p50 = { direct: avg(single.direct, (r) => r.latency.p50), proxied: avg(single.proxied, (r) => r.latency.p50) };
    const p99 = { direct: avg(single.direct, (r) => r.latency.p99), proxied: avg(single.proxied, (r) => r.latency.p99) };
    const loadP50 = { direct: avg(load.direct, (r) => r.latency.p50), proxied: avg(load.proxied, (r) => r.latency.p50) };
    const loadP99 = { direct: avg(load.direct, (r) => r.latency.p99), proxied: avg(load.proxied, (r) => r.latency.p99) };

    const sse = { direct: [] as number[], proxied: [] as number[] };
    for (let i = 0; i < SSE_RUNS; i++) {
      sse.direct.push(await firstEvent(`${direct}/events`, {}));
      sse.proxied.push(await firstEvent(`${proxied}/events`, { 'x-svc-user-context': sign(`proxy:${port}`) }));
    }

    const ratio = rps.proxied / rps.direct;
    const added = p50.proxied - p50.direct;
    const verdict = (ok: boolean) => (ok ? 'met' : '**missed**');
    const ms = (n: number) => `${n.toFixed(2)} ms`;
    const markdown = `## Daemon proxy (svc-agent)

An upstream HTTP server on loopback (its own process) answering \`200 ok\`, reached directly and
through svc-agent's \`/proxy/{port}/\` (http-proxy-middleware; each proxied request carries its own
signed \`X-Svc-User-Context\`, signed before the timed window, verified and stripped by the daemon).
Load generator, daemon and upstream share the machine's 2 cores, so the proxied path runs three
busy processes where the direct path runs two. autocannon ${CONNECTIONS} connections for
throughput, 1 connection for latency; two alternating rounds each, averaged. Time to first SSE event:
a new request to an SSE endpoint until its first chunk, median of ${SSE_RUNS}.

| measure | direct | through the daemon | ratio / added | target |
|---|---|---|---|---|
| requests/s (${CONNECTIONS} connections) | ${rps.direct.toFixed(0)} | ${rps.proxied.toFixed(0)} | ${(ratio * 100).toFixed(0)}% | >= 70%: ${verdict(ratio >= 0.7)} |
| latency p50 (1 connection) | ${ms(p50.direct)} | ${ms(p50.proxied)} | +${ms(added)} | < 2 ms added: ${verdict(added < 2)} |
| latency p99 (1 connection) | ${ms(p99.direct)} | ${ms(p99.proxied)} | +${ms(p99.proxied - p99.direct)} | |
| latency p50 / p99 under load | ${ms(loadP50.direct)} / ${ms(loadP99.direct)} | ${ms(loadP50.proxied)} / ${ms(loadP99.proxied)} | | |
| time to first SSE event | ${ms(median(sse.direct))} | ${ms(median(sse.proxied))} | +${ms(median(sse.proxied) - median(sse.direct))} | |

autocannon reports latency in whole milliseconds on loopback, so sub-millisecond differences show as 0 or 1.`;
    console.log(markdown);
    writeSection('daemon-proxy', markdown);
  } finally {
    await daemon.stop();
    upstream.kill();
    rmSync(dirs.workspace, { recursive: true, force: true });
    rmSync(dirs.home, { recursive: true, force: true });
    cleanupArtifacts();
  }
}

/** A trivial upstream in its own process: `200 ok`, and an SSE stream at /events. */
async function startUpstream(): Promise<{ upstream: ChildProcess; port: number }> {
  const script = `
    const http = require('node:http');
    const server = http.createServer((req, res) => {
      if (req.url === '/events') { res.writeHead(200, { 'content-type': 'text/event-stream' }); res.write('data: first\\n\\n'); return; }
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 2 }); res.end('ok');
    });
    server.listen(0, '127.0.0.1', () => console.log(server.address().port));`;
  const upstream = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [chunk] = (await once(upstream.stdout!, 'data')) as [Buffer];
  return { upstream, port: Number(chunk.toString().trim()) };
}

async function firstEvent(url: string, headers: Record<string, string>): Promise<number> {
  const started = performance.now();
  const controller = new AbortController();
  const res = await fetch(url, { headers, signal: controller.signal });
  const reader = res.body!.getReader();
  await reader.read();
  const elapsed = performance.now() - started;
  controller.abort();
  await reader.cancel().catch(() => undefined);
  return elapsed;
}

await main();
