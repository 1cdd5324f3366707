// Benchmarks write their results into one section of docs/benchmarks.md each, so
// several benchmarks can update the file without overwriting each other.
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import os from 'node:os';

const REPORT = new URL('../../docs/benchmarks.md', import.meta.url);
const HEADER = `# Benchmarks

Each section is written by \`make bench\` (or \`npx tsx bench/<name>/main.ts\`). Every figure is
shown next to a baseline measured in the same run on the same machine; the ratio is the figure
that matters, absolute times depend on the machine.
`;

/** Replaces (or appends) the section `name` of docs/benchmarks.md with `markdown`. */
export function writeSection(name: string, markdown: string): void {
  const start = `<!-- bench:${name}:start -->`;
  const end = `<!-- bench:${name}:end -->`;
  const current = existsSync(REPORT) ? readFileSync(REPORT, 'utf8') : HEADER;
  const block = `${start}\n${markdown.trim()}\n\n${machineLine()}\n${end}`;
  const from = current.indexOf(start);
  const to = current.indexOf(end);
  const next = from >= 0 && to > from
    ? current.slice(0, from) + block + current.slice(to + end.length)
    : `${current.trimEnd()}\n\n${block}\n`;
  writeFileSync(REPORT, next);
}

function machineLine(): string {
  let git = '';
  try { git = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim(); } catch { /* not a checkout */ }
  const cpu = os.cpus()[0]?.model ?? 'unknown cpu';
  return `_Measured ${new Date().toISOString().slice(0, 10)} on ${os.cpus().length} × ${cpu}, Node ${process.version}${git ? `, commit ${git}` : ''}._`;
}

/** Percentile (0..100) of a list of numbers, nearest-rank. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

export function median(values: number[]): number {
  return percentile(values, 50);
}
