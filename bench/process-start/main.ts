// The start of the API and the operator processes as the chart and `svc dev` run them
// (`node dist/src/main/api.js`, `operator.js`: their esbuild bundles, docs/development.md "Bundled
// processes"), next to the same composition roots from the tsc output (`api-root.js`,
// `operator-root.js`: the baseline, what ran before the bundles), alternated in the same run
// against one `svc dev`'s cluster. Per start: the wall time to ready (the API's /readyz answers
// 200; the operator's health port listens, a standby beside svc dev's leader), the CPU the process
// used by then, and its resident memory then. Needs the build (make build);
// run with `npx tsx bench/process-start/main.ts`.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { statFields } from '../../src/lib/proc.js';
import { removeDevDir, startDev } from '../../test/helpers/dev.js';
import { startApiProcess, startOperatorProcess } from '../../test/helpers/processes.js';
import { median, writeSection } from '../lib/report.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 8);
const TICK_MS = 1000 / 100; // USER_HZ: /proc's clock ticks are 1/100 s on Linux

interface Start { wallMs: number; cpuMs: number; rssMb: number }

/** utime + stime of `pid` in ms, and its resident memory in MB. */
function usage(pid: number): { cpuMs: number; rssMb: number } {
  const fields = statFields(pid)!;
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
  return { cpuMs: (Number(fields[11]) + Number(fields[12])) * TICK_MS, rssMb: rssKb / 1024 };
}

/** Starts `script` as the chart would (test/helpers/processes.ts), waits until it is ready, measures, stops it. */
async function startOnce(script: string, role: 'api' | 'operator', kubeconfig: string): Promise<Start> {
  const mirrors = mkdtempSync(path.join(os.tmpdir(), 'svc-bench-mirrors-'));
  const env = { SVC_MIRROR_DIR: mirrors };
  const started = process.hrtime.bigint();
  const main = role === 'api'
    ? await startApiProcess(kubeconfig, env, { script: script as 'api.js' | 'api-root.js' })
    : await startOperatorProcess(kubeconfig, env, { script: script as 'operator.js' | 'operator-root.js' });
  try {
    return { wallMs: Number(process.hrtime.bigint() - started) / 1e6, ...usage(main.process.pid!) };
  } finally {
    await main.stop();
    rmSync(mirrors, { recursive: true, force: true });
  }
}

const cases = [
  { name: 'API, bundle (`api.js`)', script: 'api.js', role: 'api' as const },
  { name: 'API, tsc output (`api-root.js`, baseline)', script: 'api-root.js', role: 'api' as const },
  { name: 'operator, bundle (`operator.js`)', script: 'operator.js', role: 'operator' as const },
  { name: 'operator, tsc output (`operator-root.js`, baseline)', script: 'operator-root.js', role: 'operator' as const },
];

const dev = await startDev();
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
  removeDevDir(dev.dataDir);
}
