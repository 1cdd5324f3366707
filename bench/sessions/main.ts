// Sessions benchmark: time from POST /sessions to `running` through `svc dev` with the process
// provider and the fixture engine (20 one at a time, 10 at once), next to the floor measured in
// the same run (the engine's own start: spawn -> its health answers), and the operator's CPU and
// memory per live sandbox. Run (after `make build`): npx tsx bench/sessions/main.ts
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { median, percentile, writeSection } from '../lib/report.js';
import { runCheckpointBench } from './checkpoint.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const RUNS = 20;
const CONCURRENT = 10;
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

/** The floor: the fixture engine's own start (spawn -> GET /global/health answers). */
async function engineStart(argv: (port: number) => string[], home: string): Promise<number> {
  const port = await freePort();
  const started = performance.now();
  const [command, ...args] = argv(port);
  const child = spawn(command!, args, { env: { PATH: process.env.PATH, HOME: home, ...OPENCODE_OFFLINE }, stdio: 'ignore' });
  for (;;) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/global/health`, { signal: AbortSignal.timeout(500) })).ok) break;
    } catch { /* not yet */ }
    await sleep(5);
  }
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

async function main(): Promise<void> {
  const work = mkdtempSync(path.join(os.tmpdir(), 'svc-bench-sessions-'));
  const engine = path.join(work, 'fixture-engine.mjs');
  await build({ entryPoints: [path.join(ROOT, 'test/fixtures/engine/main.ts')], outfile: engine, bundle: true, platform: 'node', format: 'esm', target: 'node20', logLevel: 'error' });
  const repo = path.join(work, 'repo');
  execFileSync('git', ['init', '-q', '-b', 'main', repo]);
  execFileSync('git', ['-c', 'user.name=b', '-c', 'user.email=b@b', 'commit', '-q', '--allow-empty', '-m', 'init'], { cwd: repo });

  let dev: ChildProcess | null = null;
  try {
    const floor: number[] = [];
    for (let i = 0; i < RUNS; i++) floor.push(await engineStart((port) => [process.execPath, engine, '--port', String(port)], mkdtempSync(path.join(work, 'home-'))));
    const opencodeFloor: number[] = [];
    for (let i = 0; i < OPENCODE_RUNS; i++) opencodeFloor.push(await engineStart((port) => [OPENCODE, 'serve', '--hostname', '127.0.0.1', '--port', String(port)], mkdtempSync(path.join(work, 'home-'))));

    const dataDir = path.join(work, 'dev');
    let output = '';
    dev = spawn(process.execPath, [path.join(ROOT, 'bin/svc.js'), 'dev', '--data-dir', dataDir, '--api-port', '0', '--kube-port', '0',
      '--engine-command', `'${process.execPath}' '${engine}' --port {port}`, '--max-sessions', '100'], {
      env: { ...process.env, SVC_SANDBOX_DIRECT_LOCAL_REPOS: '1' }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    dev.stdout!.on('data', (c: Buffer) => { output += c.toString(); });
    dev.stderr!.on('data', (c: Buffer) => { output += c.toString(); });
    while (!output.includes(': leading')) await sleep(100);
    const env = Object.fromEntries([...readFileSync(path.join(dataDir, 'env'), 'utf8').matchAll(/^export ([A-Z_]+)='([^']*)'$/gm)].map((m) => [m[1]!, m[2]!]));
    const kenv = { ...process.env, KUBECONFIG: env.KUBECONFIG };
    execFileSync('kubectl', ['apply', '-f', '-'], { env: kenv, input: JSON.stringify({ apiVersion: 'svc.dev/v1alpha1', kind: 'Project', metadata: { name: 'bench' }, spec: { repoUrl: repo, defaultBranch: 'main' } }) });
    let uid = execFileSync('kubectl', ['get', 'project', 'bench', '-o', 'jsonpath={.metadata.uid}'], { env: kenv, encoding: 'utf8' });
    const call = async (method: string, url: string, body?: unknown) => {
      const res = await fetch(`${env.SVC_API_URL}/projects/${uid}/sessions${url}`, {
        method, headers: { authorization: `Bearer ${env.SVC_CLI_TOKEN}`, 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined,
      });
      return (await res.json()) as { session: { id: string; status: string } };
    };
    const untilRunning = async (): Promise<{ id: string; ms: number }> => {
      const started = performance.now();
      const { session } = await call('POST', '', {});
      for (;;) {
        if ((await call('GET', `/${session.id}`)).session.status === 'running') return { id: session.id, ms: performance.now() - started };
        await sleep(20);
      }
    };

    const sequential: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const { id, ms } = await untilRunning();
      sequential.push(ms);
      await call('POST', `/${id}/stop`);
    }
    const operator = Number(readdirSync('/proc').find((p) => {
      try { return /^\d+$/.test(p) && readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('operator.js') && readFileSync(`/proc/${p}/environ`, 'latin1').includes(`SVC_SANDBOX_DIR=${path.join(dataDir, 'sandboxes')}\0`); } catch { return false; }
    }));
    await sleep(6000); // the stops settle
    const idleCpu0 = cpuSeconds(operator);
    await sleep(10_000);
    const idleCpu = (cpuSeconds(operator) - idleCpu0) / 10;
    const idleRss = rssMiB(operator);

    const concurrentStart = performance.now();
    const concurrent = await Promise.all(Array.from({ length: CONCURRENT }, () => untilRunning()));
    const allRunningMs = performance.now() - concurrentStart;
    await sleep(3000);
    const cpu0 = cpuSeconds(operator);
    await sleep(10_000);
    const liveCpu = (cpuSeconds(operator) - cpu0) / 10;
    const liveRss = rssMiB(operator);
    for (const c of concurrent) await call('POST', `/${c.id}/stop`);
    await sleep(6000);

    // The real opencode: a second svc dev without --engine-command (its default engine).
    dev.kill('SIGTERM');
    await new Promise((r) => dev!.once('exit', r));
    const realDir = path.join(work, 'dev-opencode');
    output = '';
    dev = spawn(process.execPath, [path.join(ROOT, 'bin/svc.js'), 'dev', '--data-dir', realDir, '--api-port', '0', '--kube-port', '0', '--max-sessions', '100'], {
      env: { ...process.env, ...OPENCODE_OFFLINE, SVC_SANDBOX_DIRECT_LOCAL_REPOS: '1' }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    dev.stdout!.on('data', (c: Buffer) => { output += c.toString(); });
    dev.stderr!.on('data', (c: Buffer) => { output += c.toString(); });
    while (!output.includes(': leading')) await sleep(100);
    Object.assign(env, Object.fromEntries([...readFileSync(path.join(realDir, 'env'), 'utf8').matchAll(/^export ([A-Z_]+)='([^']*)'$/gm)].map((m) => [m[1]!, m[2]!])));
    kenv.KUBECONFIG = env.KUBECONFIG;
    execFileSync('kubectl', ['apply', '-f', '-'], { env: kenv, input: JSON.stringify({ apiVersion: 'svc.dev/v1alpha1', kind: 'Project', metadata: { name: 'bench' }, spec: { repoUrl: repo, defaultBranch: 'main' } }) });
    uid = execFileSync('kubectl', ['get', 'project', 'bench', '-o', 'jsonpath={.metadata.uid}'], { env: kenv, encoding: 'utf8' });
    const opencode: number[] = [];
    for (let i = 0; i < OPENCODE_RUNS; i++) {
      const { id, ms } = await untilRunning();
      opencode.push(ms);
      await call('POST', `/${id}/stop`);
    }

    const fmt = (v: number) => `${v.toFixed(0)} ms`;
    const row = (name: string, values: number[], base = floor) => `| ${name} | ${fmt(median(values))} | ${fmt(percentile(values, 95))} | ${(median(values) / median(base)).toFixed(1)}× |`;
    writeSection('sessions', `## sessions: POST /sessions -> running

\`svc dev\` with the process provider and the fixture engine (test/fixtures/engine) on a local
repository (cloned directly: SVC_SANDBOX_DIRECT_LOCAL_REPOS=1). Latency = POST /sessions ->
GET shows \`running\` (branch pushed, Session Secret and CLI token written, Sandbox created,
svc-agent spawned, cloned, engine started, root session created, health polled by the
controllers), polled every 20 ms through the REST API.

| measure | median | p95 | × floor |
|---|---|---|---|
${row(`one at a time (${RUNS} sessions)`, sequential)}
${row(`${CONCURRENT} started at once, each`, concurrent.map((c) => c.ms))}
| floor: the engine's own start (spawn -> health answers), ${RUNS} runs | ${fmt(median(floor))} | ${fmt(percentile(floor, 95))} | 1.0× |
${row(`real opencode ${'`'}1.18.33${'`'}, one at a time (${OPENCODE_RUNS} sessions)`, opencode, opencodeFloor)}
| floor: \`opencode serve\` alone (spawn -> /global/health answers), ${OPENCODE_RUNS} runs | ${fmt(median(opencodeFloor))} | ${fmt(percentile(opencodeFloor, 95))} | 1.0× |

All ${CONCURRENT} concurrent sessions were running ${fmt(allRunningMs)} after the first POST.
Operator (one process: Project, Session and Sandbox controllers): ${(idleCpu * 100).toFixed(1)}% of a core and
${idleRss.toFixed(0)} MiB RSS with no live sandbox; ${(liveCpu * 100).toFixed(1)}% and ${liveRss.toFixed(0)} MiB with ${CONCURRENT} live
sandboxes, i.e. about ${(((liveCpu - idleCpu) / CONCURRENT) * 100).toFixed(2)}% of a core and ${((liveRss - idleRss) / CONCURRENT).toFixed(1)} MiB per live sandbox
(the controllers poll each running sandbox's health every 5 s). The real opencode rows run a
second \`svc dev\` with its default engine, offline; their × column is against opencode's own start.`);
    process.stdout.write(readFileSync(path.join(ROOT, 'docs/benchmarks.md'), 'utf8').split('<!-- bench:sessions:start -->')[1]!.split('<!-- bench:sessions:end -->')[0]!);
  } finally {
    if (dev && dev.exitCode === null) {
      dev.kill('SIGTERM');
      await new Promise((r) => dev!.once('exit', r));
    }
    rmSync(work, { recursive: true, force: true });
  }
}

main().then(() => runCheckpointBench()).catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
