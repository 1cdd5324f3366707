// Sessions benchmark: time from POST /sessions to `running` through `svc dev` with the process
// provider and the fixture engine (20 one at a time, isolated and with --unsafe-no-isolation; 10 at
// once, isolated), next to the floors measured in the same run (the engine's own start: spawn ->
// its health answers; the same start jailed, slot included), the real opencode both ways next to
// its own start, and the operator's CPU and memory per live sandbox. Needs root (the jail).
// Run (after `make build`): npx tsx bench/sessions/main.ts
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import YAML from 'yaml';
import { Jail } from '../../src/lib/jail/index.js';
import { median, percentile, writeSection } from '../lib/report.js';
import { runCheckpointBench } from './checkpoint.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const RUNS = 20;
const CONCURRENT = 10;
/** Starts measured the earlier way too: GET through the REST API every 20 ms until `running`. */
const POLLED_RUNS = 10;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Sessions measured with the real opencode (each start is seconds: fewer runs). */
const OPENCODE_RUNS = Number(process.env.BENCH_OPENCODE_RUNS ?? 10);
const OPENCODE = path.join(ROOT, 'node_modules/.bin/opencode');
/** opencode offline (DESIGN §2): no model list, update or share calls. */
const OPENCODE_OFFLINE = { OPENCODE_DISABLE_MODELS_FETCH: '1', OPENCODE_DISABLE_AUTOUPDATE: '1', OPENCODE_DISABLE_SHARE: '1' };

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * When `url` first answers 200: a probe every 5 ms, none waiting for another (opencode never
 * answers a request it accepted while starting, and answers those that come later), each waiting
 * up to 2 s for its answer. Probes at least as eagerly as svc-agent does (daemon/engine.ts).
 */
function firstAnswer(url: string): Promise<void> {
  return new Promise((resolve) => {
    let answered = false;
    const probe = () => {
      if (answered) return;
      fetch(url, { signal: AbortSignal.timeout(2000) }).then((res) => {
        if (res.ok && !answered) { answered = true; resolve(); }
      }, () => undefined);
      setTimeout(probe, 5);
    };
    probe();
  });
}

/** The floor: an engine's own start (spawn -> GET /global/health answers). */
async function engineStart(argv: (port: number) => string[], home: string): Promise<number> {
  const port = await freePort();
  const started = performance.now();
  const [command, ...args] = argv(port);
  const child = spawn(command!, args, { env: { PATH: process.env.PATH, HOME: home, ...OPENCODE_OFFLINE }, stdio: 'ignore' });
  await firstAnswer(`http://127.0.0.1:${port}/global/health`);
  const ms = performance.now() - started;
  child.kill();
  return ms;
}

function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime in clock ticks (USER_HZ = 100 on Linux)
}

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** The jail's floor: a slot, then the fixture engine started jailed in it (spawn -> its health answers through the slot's address). */
async function jailedEngineStart(jail: Jail, engine: string, owner: string): Promise<{ total: number; slot: number; release: number }> {
  const port = 4096;
  const started = performance.now();
  const slot = await jail.allocate(owner, `bench-${performance.now()}`, [port]);
  const allocated = performance.now();
  const child = await jail.spawn(slot, {
    argv: [process.execPath, engine, '--port', String(port)], cwd: '/', volumes: [], stdio: ['ignore', 'ignore', 'ignore'],
    env: { PATH: '/usr/bin:/bin', HOME: '/tmp', FIXTURE_ENGINE_HOST: '0.0.0.0' },
  });
  await firstAnswer(`http://${slot.address}:${port}/global/health`);
  const total = performance.now() - started;
  const releasing = performance.now();
  await jail.terminate(slot, child.pid!, 2000);
  await jail.release(slot);
  return { total, slot: allocated - started, release: performance.now() - releasing };
}

/**
 * Sessions as the cluster shows them, through one watch (kubectl's `get sessions -w`): when each
 * was first seen in each status. Unlike polling the REST API (every 20 ms, as the polled rows do),
 * it costs nothing while it waits: a poll is an API request, and ~20 of them per start took a
 * share of the two cores the start itself needs.
 */
function watchSessions(kubeconfig: string): { until(id: string, statuses: string[]): Promise<{ status: string; at: number }>; close(): void } {
  const config = YAML.parse(readFileSync(kubeconfig, 'utf8')) as {
    clusters: { cluster: { server: string; 'certificate-authority-data'?: string } }[]; users: { user: { token?: string } }[];
  };
  const { server, 'certificate-authority-data': caData } = config.clusters[0]!.cluster;
  const seen = new Map<string, Map<string, number>>();
  const waiting = new Map<string, { statuses: string[]; resolve: (s: { status: string; at: number }) => void }>();
  const settle = (id: string) => {
    const wait = waiting.get(id);
    const status = wait?.statuses.find((s) => seen.get(id)?.has(s));
    if (!wait || !status) return;
    waiting.delete(id);
    wait.resolve({ status, at: seen.get(id)!.get(status)! });
  };
  let buffer = '';
  const req = https.request(`${server}/apis/svc.dev/v1alpha1/sessions?watch=true`, {
    headers: { authorization: `Bearer ${config.users[0]!.user.token}` }, ca: caData ? Buffer.from(caData, 'base64') : undefined,
  }, (res) => {
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      const at = performance.now();
      buffer += chunk;
      let newline;
      while ((newline = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        if (!line.trim()) continue;
        const { object } = JSON.parse(line) as { object: { metadata: { name: string }; status?: { status?: string } } };
        const status = object.status?.status;
        const id = object.metadata.name;
        if (!status) continue;
        const statuses = seen.get(id) ?? seen.set(id, new Map()).get(id)!;
        if (!statuses.has(status)) statuses.set(status, at);
        settle(id);
      }
    });
  });
  req.on('error', () => undefined);
  req.end();
  return {
    until: (id, statuses) => new Promise((resolve) => { waiting.set(id, { statuses, resolve }); settle(id); }),
    close: () => req.destroy(),
  };
}

interface DevBench {
  process: ChildProcess;
  dataDir: string;
  /** POST, then `running` as the watch sees it (polled: as GET shows it, every 20 ms). */
  untilRunning(mode?: 'watched' | 'polled'): Promise<{ id: string; ms: number }>;
  stopSession(id: string): Promise<void>;
  /** POST .../stop, then `stopped` as the watch sees it (its sandbox gone). */
  stopSessionAndWait(id: string): Promise<void>;
  stop(): Promise<void>;
}

/** svc dev on `dataDir` with `args`, a project on `repo`, and session calls through its REST API. */
async function startDev(dataDir: string, repo: string, args: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<DevBench> {
  let output = '';
  const dev = spawn(process.execPath, [path.join(ROOT, 'bin/svc.js'), 'dev', '--data-dir', dataDir, '--api-port', '0', '--kube-port', '0', '--max-sessions', '100', ...args], {
    env: { ...process.env, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  dev.stdout!.on('data', (c: Buffer) => { output += c.toString(); });
  dev.stderr!.on('data', (c: Buffer) => { output += c.toString(); });
  // leading (its controllers run) and running (the env file written): the operator may lead first
  while (!output.includes(': leading') || !output.includes('svc dev is running.')) {
    if (dev.exitCode !== null) throw new Error(`svc dev exited:\n${output}`);
    await sleep(100);
  }
  const env = Object.fromEntries([...readFileSync(path.join(dataDir, 'env'), 'utf8').matchAll(/^export ([A-Z_]+)='([^']*)'$/gm)].map((m) => [m[1]!, m[2]!]));
  const kenv = { ...process.env, KUBECONFIG: env.KUBECONFIG };
  execFileSync('kubectl', ['apply', '-f', '-'], { env: kenv, input: JSON.stringify({ apiVersion: 'svc.dev/v1alpha1', kind: 'Project', metadata: { name: 'bench' }, spec: { repoUrl: repo, defaultBranch: 'main' } }) });
  const uid = execFileSync('kubectl', ['get', 'project', 'bench', '-o', 'jsonpath={.metadata.uid}'], { env: kenv, encoding: 'utf8' });
  const call = async (method: string, url: string, body?: unknown) => {
    const res = await fetch(`${env.SVC_API_URL}/projects/${uid}/sessions${url}`, {
      method, headers: { authorization: `Bearer ${env.SVC_CLI_TOKEN}`, 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined,
    });
    return (await res.json()) as { session: { id: string; status: string; reason: string | null } };
  };
  const watch = watchSessions(env.KUBECONFIG!);
  return {
    process: dev,
    dataDir,
    async untilRunning(mode = 'watched') {
      const started = performance.now();
      const { session } = await call('POST', '', {});
      if (mode === 'watched') {
        const { status, at } = await watch.until(session.id, ['running', 'failed']);
        if (status === 'failed') throw new Error(`session failed: ${(await call('GET', `/${session.id}`)).session.reason}\n${output.slice(-3000)}`);
        return { id: session.id, ms: at - started };
      }
      for (;;) {
        const seen = (await call('GET', `/${session.id}`)).session;
        if (seen.status === 'running') return { id: session.id, ms: performance.now() - started };
        if (seen.status === 'failed') throw new Error(`session failed: ${seen.reason}\n${output.slice(-3000)}`);
        await sleep(20);
      }
    },
    async stopSession(id) { await call('POST', `/${id}/stop`); },
    async stopSessionAndWait(id) {
      await call('POST', `/${id}/stop`);
      await watch.until(id, ['stopped', 'failed']);
    },
    async stop() {
      watch.close();
      if (dev.exitCode !== null) return;
      dev.kill('SIGTERM');
      await new Promise((r) => dev.once('exit', r));
    },
  };
}

/**
 * `runs` sessions one at a time on each of `devs`, alternating between them (so that a shared
 * machine's drift and warm-up weigh on both alike), each stopped before the next: its sandbox
 * gone (its checkpoint written and pushed, its slot released), then a moment for what follows
 * a stop. Before, the next start ran while the last one's stop did that work.
 */
async function oneAtATime(devs: DevBench[], runs: number, mode: 'watched' | 'polled' = 'watched'): Promise<number[][]> {
  const times: number[][] = devs.map(() => []);
  for (let i = 0; i < runs; i++) {
    for (const [n, dev] of devs.entries()) {
      const { id, ms } = await dev.untilRunning(mode);
      times[n]!.push(ms);
      await dev.stopSessionAndWait(id);
      await sleep(300);
    }
  }
  return times;
}

async function main(): Promise<void> {
  const work = mkdtempSync(path.join(os.tmpdir(), 'svc-bench-sessions-'));
  // its own folder (readable by the sandboxes' uids): shown to them with --sandbox-mount
  const engineDir = path.join(work, 'engine');
  mkdirSync(engineDir, { mode: 0o755 });
  const engine = path.join(engineDir, 'fixture-engine.mjs');
  await build({ entryPoints: [path.join(ROOT, 'test/fixtures/engine/main.ts')], outfile: engine, bundle: true, platform: 'node', format: 'esm', target: 'node20', logLevel: 'error' });
  const repo = path.join(work, 'repo');
  execFileSync('git', ['init', '-q', '-b', 'main', repo]);
  execFileSync('git', ['-c', 'user.name=b', '-c', 'user.email=b@b', 'commit', '-q', '--allow-empty', '-m', 'init'], { cwd: repo });
  // the fixture engine outside the toolchain: shown to the sandboxes read-only
  const fixtureArgs = ['--engine-command', `'${process.execPath}' '${engine}' --port {port}`, '--sandbox-mount', engineDir];

  const devs: DevBench[] = [];
  try {
    const floor: number[] = [];
    for (let i = 0; i < RUNS; i++) floor.push(await engineStart((port) => [process.execPath, engine, '--port', String(port)], mkdtempSync(path.join(work, 'home-'))));
    const jail = new Jail({ apiPorts: [], toolchain: [], mounts: [{ path: engineDir, writable: false }] });
    await jail.networks.ensureGateway();
    const jailed: { total: number; slot: number; release: number }[] = [];
    for (let i = 0; i < RUNS; i++) jailed.push(await jailedEngineStart(jail, engine, work));
    const opencodeFloor: number[] = [];
    for (let i = 0; i < OPENCODE_RUNS; i++) opencodeFloor.push(await engineStart((port) => [OPENCODE, 'serve', '--hostname', '127.0.0.1', '--port', String(port)], mkdtempSync(path.join(work, 'home-'))));

    // the fixture engine, both ways at once (alternating): the same repository through the git gateway
    const dev = await startDev(path.join(work, 'dev'), repo, fixtureArgs);
    devs.push(dev);
    const unsafe = await startDev(path.join(work, 'dev-unsafe'), repo, [...fixtureArgs, '--unsafe-no-isolation']);
    devs.push(unsafe);
    const [sequential, unisolated] = await oneAtATime([dev, unsafe], RUNS) as [number[], number[]];
    const [polled] = await oneAtATime([dev], POLLED_RUNS, 'polled') as [number[]];
    await unsafe.stop();
    const operator = Number(readdirSync('/proc').find((p) => {
      try { return /^\d+$/.test(p) && readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('operator.js') && readFileSync(`/proc/${p}/environ`, 'latin1').includes(`SVC_SANDBOX_DIR=${path.join(dev.dataDir, 'sandboxes')}\0`); } catch { return false; }
    }));
    await sleep(6000); // the stops settle
    const idleCpu0 = cpuSeconds(operator);
    await sleep(10_000);
    const idleCpu = (cpuSeconds(operator) - idleCpu0) / 10;
    const idleRss = rssMiB(operator);

    const concurrentStart = performance.now();
    const concurrent = await Promise.all(Array.from({ length: CONCURRENT }, () => dev.untilRunning()));
    const allRunningMs = performance.now() - concurrentStart;
    await sleep(3000);
    const cpu0 = cpuSeconds(operator);
    await sleep(10_000);
    const liveCpu = (cpuSeconds(operator) - cpu0) / 10;
    const liveRss = rssMiB(operator);
    for (const c of concurrent) await dev.stopSession(c.id);
    await sleep(6000);
    await dev.stop();

    // The real opencode, both ways (alternating): svc dev without --engine-command (its default engine).
    const real = await startDev(path.join(work, 'dev-opencode'), repo, [], OPENCODE_OFFLINE);
    devs.push(real);
    const realUnsafe = await startDev(path.join(work, 'dev-opencode-unsafe'), repo, ['--unsafe-no-isolation'], OPENCODE_OFFLINE);
    devs.push(realUnsafe);
    const [opencode, opencodeUnisolated] = await oneAtATime([real, realUnsafe], OPENCODE_RUNS) as [number[], number[]];
    await real.stop();
    await realUnsafe.stop();

    const fmt = (v: number) => `${v.toFixed(0)} ms`;
    const row = (name: string, values: number[], base = floor) => `| ${name} | ${fmt(median(values))} | ${fmt(percentile(values, 95))} | ${(median(values) / median(base)).toFixed(1)}× |`;
    const jailTotal = jailed.map((j) => j.total);
    // issue 24's targets, each next to its floor measured in this run
    const verdict = (ok: boolean) => (ok ? '**met**' : '**not met**');
    const singleTarget = median(floor) + 250;
    const concurrentTarget = 2 * median(sequential);
    const concurrentWorst = Math.max(...concurrent.map((c) => c.ms));
    const opencodeTarget = median(opencodeFloor) + 400;
    /** Whether a difference of medians is within the spread (p95 − median) of either row. */
    const within = (delta: number, a: number[], b: number[]) => Math.abs(delta) <= Math.max(percentile(a, 95) - median(a), percentile(b, 95) - median(b));
    writeSection('sessions', `## sessions: POST /sessions -> running, and the cost of isolation

\`svc dev\` with the process provider and the fixture engine (test/fixtures/engine) on a local
repository cloned through the git gateway. Latency = POST /sessions -> the Session's status
\`running\` as one watch on Sessions sees it (\`kubectl get sessions -w\`; Session Secret and CLI
token written, Sandbox made or a warm one given, svc-agent started while the branch is pushed,
cloned, engine started, its daemon's state event to the API, health read by the controllers).
The polled row measures it by polling \`GET /sessions/:id\` every 20 ms instead: about 20 API
requests per start, whose CPU the start itself waits for on two cores. One at a time means the
last session's stop is over (\`stopped\`: its checkpoint pushed, its sandbox gone) before the
next starts; until 2026-11-29 the next started while that stop still ran. Isolated is svc dev's
default (docs/sandboxes.md); the \`--unsafe-no-isolation\` rows run the same without the jail: a
second svc dev, in the same run, sessions alternating between the two.

| measure | median | p95 | × floor |
|---|---|---|---|
${row(`one at a time, isolated (${RUNS} sessions)`, sequential)}
${row(`one at a time, --unsafe-no-isolation (${RUNS} sessions)`, unisolated)}
${row(`one at a time, isolated, polled through REST every 20 ms (${POLLED_RUNS} sessions)`, polled)}
${row(`${CONCURRENT} started at once, isolated, each`, concurrent.map((c) => c.ms))}
| floor: the engine's own start (spawn -> health answers), ${RUNS} runs | ${fmt(median(floor))} | ${fmt(percentile(floor, 95))} | 1.0× |
${row('the jail alone: a slot, then the same engine started jailed (spawn -> health answers)', jailTotal)}
${row(`real opencode \`1.18.33\`, one at a time, isolated (${OPENCODE_RUNS} sessions)`, opencode, opencodeFloor)}
${row(`real opencode, one at a time, --unsafe-no-isolation (${OPENCODE_RUNS} sessions)`, opencodeUnisolated, opencodeFloor)}
| floor: \`opencode serve\` alone (spawn -> /global/health answers), ${OPENCODE_RUNS} runs | ${fmt(median(opencodeFloor))} | ${fmt(percentile(opencodeFloor, 95))} | 1.0× |

**Targets** (issue 24, against the floors of this run): one at a time, p50 within the engine's own
start + 250 ms = ${fmt(singleTarget)}: ${verdict(median(sequential) <= singleTarget)} (${fmt(median(sequential))});
${CONCURRENT} at once, each within 2× that p50 = ${fmt(concurrentTarget)}: ${verdict(concurrentWorst <= concurrentTarget)} (the slowest ${fmt(concurrentWorst)});
real opencode within its own start + 400 ms = ${fmt(opencodeTarget)}: ${verdict(median(opencode) <= opencodeTarget)} (${fmt(median(opencode))}).
Where the rest of a start goes: docs/sessions.md "Where a start's time goes".

**What isolation costs**: the jail's own share of a start, measured directly, is a slot (network
namespace, veth, routes, nftables: ${fmt(median(jailed.map((j) => j.slot)))} median) plus ${fmt(Math.max(0, median(jailTotal) - median(jailed.map((j) => j.slot)) - median(floor)))} added to the engine's start by the two
bubblewraps (a release takes ${fmt(median(jailed.map((j) => j.release)))}, on the stop path). End to end, alternating sessions, the
median isolated start differs from the unisolated one by ${fmt(median(sequential) - median(unisolated))} with the fixture engine and
${fmt(median(opencode) - median(opencodeUnisolated))} with the real opencode; ${within(median(sequential) - median(unisolated), sequential, unisolated) && within(median(opencode) - median(opencodeUnisolated), opencode, opencodeUnisolated) ? 'both within the spread of their rows (p95 − median), i.e. lost in this shared machine\'s noise' : 'at least one beyond the spread of its rows (p95 − median)'}.
All ${CONCURRENT} concurrent sessions were running ${fmt(allRunningMs)} after the first POST.
Operator (one process: Project, Session and Sandbox controllers): ${(idleCpu * 100).toFixed(1)}% of a core and
${idleRss.toFixed(0)} MiB RSS with no live sandbox; ${(liveCpu * 100).toFixed(1)}% and ${liveRss.toFixed(0)} MiB with ${CONCURRENT} live
sandboxes, i.e. about ${(((liveCpu - idleCpu) / CONCURRENT) * 100).toFixed(2)}% of a core and ${((liveRss - idleRss) / CONCURRENT).toFixed(1)} MiB per live sandbox
(without a state event from its daemon the controllers look at a running sandbox once a minute). The real opencode rows run
\`svc dev\` with its default engine, offline; their × column is against opencode's own start.`);
    process.stdout.write(readFileSync(path.join(ROOT, 'docs/benchmarks.md'), 'utf8').split('<!-- bench:sessions:start -->')[1]!.split('<!-- bench:sessions:end -->')[0]!);
  } finally {
    for (const dev of devs) await dev.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

main().then(() => runCheckpointBench()).catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
