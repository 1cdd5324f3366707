// The start of the API and the operator processes as the chart and `svc dev` run them
// (`node dist/src/main/api.js`, `operator.js`: their esbuild bundles, docs/development.md "Bundled
// processes"), next to the same composition roots from the tsc output (`api-root.js`,
// `operator-root.js`: the baseline, what ran before the bundles), alternated in the same run
// against one `svc dev`'s cluster. Per start: the wall time to ready (the API's /readyz answers
// 200; the operator's health port listens, a standby beside svc dev's leader), the CPU the process
// used by then, and its resident memory then. Needs the build (make build);
// run with `npx tsx bench/process-start/main.ts`.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, writeSection } from '../lib/report.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 8);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MAIN = path.join(ROOT, 'dist/src/main');
const TICK_MS = 1000 / 100; // USER_HZ: /proc's clock ticks are 1/100 s on Linux

interface Start { wallMs: number; cpuMs: number; rssMb: number }

/** utime + stime of `pid` in ms, and its resident memory in MB. */
function usage(pid: number): { cpuMs: number; rssMb: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
  return { cpuMs: (Number(fields[11]) + Number(fields[12])) * TICK_MS, rssMb: rssKb / 1024 };
}

async function startDev(dataDir: string): Promise<{ stop: () => Promise<void>; kubeconfig: string }> {
  const dev = spawn(process.execPath, [path.join(ROOT, 'bin/svc.js'), 'dev', '--data-dir', dataDir, '--api-port', '0', '--kube-port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise<void>((resolve) => dev.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => { output += chunk.toString(); if (output.includes('svc dev is running.')) resolve(); };
    dev.stdout!.on('data', onData);
    dev.stderr!.on('data', onData);
    void exited.then(() => reject(new Error(`svc dev exited:\n${output}`)));
  });
  return { kubeconfig: path.join(dataDir, 'kubeconfig'), stop: async () => { dev.kill('SIGTERM'); await exited; } };
}

/** Starts `script`, waits until it is ready, measures, stops it. */
async function startOnce(script: string, role: 'api' | 'operator', kubeconfig: string): Promise<Start> {
  const mirrors = mkdtempSync(path.join(os.tmpdir(), 'svc-bench-mirrors-'));
  const started = process.hrtime.bigint();
  const child = spawn(process.execPath, [path.join(MAIN, script)], {
    env: {
      PATH: process.env.PATH, HOME: process.env.HOME, KUBECONFIG: kubeconfig, SVC_NAMESPACE: 'default',
      SVC_HTTP_PORT: '0', SVC_HTTP_HOST: '127.0.0.1', SVC_MIRROR_DIR: mirrors, SVC_POD_NAME: `bench-${process.pid}`,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    let output = '';
    const listening = role === 'api' ? /svc api listening on http:\/\/127\.0\.0\.1:(\d+)/ : /health on port (\d+)/;
    const port = await new Promise<string>((resolve, reject) => {
      const onData = (chunk: Buffer) => { output += chunk.toString(); const m = listening.exec(output); if (m) resolve(m[1]!); };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      void exited.then(() => reject(new Error(`${script} exited:\n${output}`)));
    });
    while (role === 'api' && !(await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false))) await new Promise((r) => setTimeout(r, 10));
    const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
    return { wallMs, ...usage(child.pid!) };
  } finally {
    child.kill('SIGTERM');
    await exited;
    rmSync(mirrors, { recursive: true, force: true });
  }
}

const cases = [
  { name: 'API, bundle (`api.js`)', script: 'api.js', role: 'api' as const },
  { name: 'API, tsc output (`api-root.js`, baseline)', script: 'api-root.js', role: 'api' as const },
  { name: 'operator, bundle (`operator.js`)', script: 'operator.js', role: 'operator' as const },
  { name: 'operator, tsc output (`operator-root.js`, baseline)', script: 'operator-root.js', role: 'operator' as const },
];

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'svc-bench-start-'));
const dev = await startDev(dataDir);
try {
  const samples = cases.map(() => [] as Start[]);
  for (const c of cases) await startOnce(c.script, c.role, dev.kubeconfig); // warm the file-system cache
  // alternated, so that the machine's load falls on every case alike
  for (let i = 0; i < RUNS; i++) for (const [k, c] of cases.entries()) samples[k]!.push(await startOnce(c.script, c.role, dev.kubeconfig));
  const of = (k: number, key: keyof Start) => median(samples[k]!.map((s) => s[key]));
  const rows = cases.map((c, k) => `| ${c.name} | ${of(k, 'wallMs').toFixed(0)} | ${of(k, 'cpuMs').toFixed(0)} | ${of(k, 'rssMb').toFixed(0)} |`);
  const ratio = (bundle: number, baseline: number, key: keyof Start) => (of(bundle, key) / of(baseline, key)).toFixed(2);
  const markdown = [
    '## process-start: the API and the operator, from start to ready',
    '',
    `Medians of ${RUNS} starts each, alternated, against one \`svc dev\`'s cluster (bench/process-start). Ready: the API's`,
    '`/readyz` answers 200 (its caches synced); the operator\'s health port listens (a standby: svc dev\'s operator leads).',
    'CPU and resident memory are the process\'s own at that moment. The baseline is the same composition root run from the',
    'tsc output, as both ran before their bundles.',
    '',
    '| process | wall ms | CPU ms | RSS MB |',
    '|---|---:|---:|---:|',
    ...rows,
    '',
    `Bundle against baseline: the API ${ratio(0, 1, 'wallMs')}× the wall time, ${ratio(0, 1, 'cpuMs')}× the CPU, ${ratio(0, 1, 'rssMb')}× the memory;`,
    `the operator ${ratio(2, 3, 'wallMs')}×, ${ratio(2, 3, 'cpuMs')}×, ${ratio(2, 3, 'rssMb')}×.`,
  ].join('\n');
  writeSection('process-start', markdown);
  console.log(markdown);
} finally {
  await dev.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
