// Whole-process start-up time of the svc CLI, as a ratio to `node -e ''` measured in the same run.
// Needs the build (make build); run with `npx tsx bench/cli-startup/main.ts`.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, writeSection } from '../lib/report.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 40);
const SVC = fileURLToPath(new URL('../../bin/svc.js', import.meta.url));

function manifestWith50Triggers(): string {
  const triggers = Array.from({ length: 50 }, (_, i) => i % 2 === 0
    ? `  - slug: nightly-${i}\n    type: cron\n    prompt: "Run the nightly check {{ cron.fired_at }}"\n    cron: "0 ${i % 60} 3 * * *"\n    timezone: Europe/Paris\n`
    : `  - slug: hook-${i}\n    type: webhook\n    prompt: "Look at {{ body.action }}"\n    secret_env: HOOK_SECRET_${i}\n    session_mode: reuse\n`);
  return `svc_version: 2\ndefault_agent: build\nagents:\n  build: { workspace: branch, svc_cli: [project.read, project.cr.open] }\ntriggers:\n${triggers.join('')}`;
}

function timeOnce(args: string[], cwd: string): number {
  const start = process.hrtime.bigint();
  const run = spawnSync(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (run.status !== 0) throw new Error(`node ${args.join(' ')} exited ${run.status}: ${run.stderr}`);
  return ms;
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-bench-cli-'));
try {
  writeFileSync(path.join(dir, 'svc.yaml'), manifestWith50Triggers());
  const cases = [
    { name: "`node -e ''` (baseline)", args: ['-e', ''] },
    { name: '`svc --version`', args: [SVC, '--version'] },
    { name: '`svc manifest validate` (50 triggers)', args: [SVC, 'manifest', 'validate', 'svc.yaml'] },
  ];
  const samples = cases.map(() => [] as number[]);
  for (const c of cases) timeOnce(c.args, dir); // warm the file-system cache
  // Interleave the cases so that machine load affects all of them alike.
  for (let i = 0; i < RUNS; i++) cases.forEach((c, k) => samples[k]!.push(timeOnce(c.args, dir)));
  const medians = samples.map(median);
  const baseline = medians[0]!;
  const rows = cases.map((c, k) => `| ${c.name} | ${medians[k]!.toFixed(1)} | ${(medians[k]! / baseline).toFixed(2)} |`);
  const markdown = [
    '## cli-startup',
    '',
    `Whole-process time (median of ${RUNS} runs, interleaved) of the built CLI, \`node bin/svc.js\`. Target: ratio under 3.`,
    '',
    '| command | median ms | ratio to baseline |',
    '|---|---:|---:|',
    ...rows,
  ].join('\n');
  writeSection('cli-startup', markdown);
  console.log(markdown);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
