// Change-request benchmark: merge preview and merge latency on a ~50,000-file,
// ~10,000-commit repository, through the git engine (src/git) next to the same plumbing
// commands run directly in the same run. Run: npx tsx bench/changerequests/main.ts
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { openMirror } from '../../src/git/index.js';
import { median, percentile, writeSection } from '../lib/report.js';
import { benchRepo, MERGE_BRANCHES } from './generate.js';
import { restBenchmark } from './rest.js';

// The benchmark's repositories are local paths, as under `svc dev` (docs/dev.md).
process.env.SVC_ALLOW_LOCAL_REPOS ??= '1';

const execFileAsync = promisify(execFile);
const WORK = new URL('../.work/changerequests/', import.meta.url).pathname;
const PREVIEW_RUNS = 50;
const MERGE_RUNS = MERGE_BRANCHES / 2; // each side merges its own branches
const IDENTITY = { GIT_AUTHOR_NAME: 'svc', GIT_AUTHOR_EMAIL: 'noreply@svc.dev', GIT_COMMITTER_NAME: 'svc', GIT_COMMITTER_EMAIL: 'noreply@svc.dev' };

interface Row { name: string; engine: number[]; baseline: number[] }

async function time(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

/** The plumbing recipe of DESIGN.md §4, run directly with execFile against a bare mirror. */
class DirectPlumbing {
  constructor(readonly dir: string, readonly url: string) {}

  async git(args: string[], env: Record<string, string> = {}, okCodes = [0]): Promise<string> {
    try {
      const { stdout } = await execFileAsync('git', args, { env: { ...process.env, GIT_DIR: this.dir, ...env }, maxBuffer: 1 << 28 });
      return stdout;
    } catch (error) {
      const code = (error as { code?: number }).code;
      if (typeof code === 'number' && okCodes.includes(code)) return (error as { stdout: string }).stdout;
      throw error;
    }
  }

  async init(): Promise<void> {
    await execFileAsync('git', ['init', '--quiet', '--bare', this.dir]);
    await this.fetch();
  }

  fetch(): Promise<string> {
    return this.git(['fetch', '--prune', '--no-tags', '--no-write-fetch-head', '--quiet', this.url, '+refs/heads/*:refs/heads/*']);
  }

  async preview(base: string, head: string): Promise<string[]> {
    const [baseSha, headSha] = (await this.git(['rev-parse', `refs/heads/${base}`, `refs/heads/${head}`])).trim().split('\n');
    const mergeBase = (await this.git(['merge-base', baseSha!, headSha!], {}, [0, 1])).trim();
    if (mergeBase === baseSha || mergeBase === headSha) return []; // fast-forward or up to date: no merge needed
    const quarantine = await mkdtemp(path.join(this.dir, 'q-'));
    try {
      const out = await this.git(['merge-tree', '--write-tree', '--name-only', '-z', '--no-messages', baseSha!, headSha!],
        { GIT_OBJECT_DIRECTORY: quarantine, GIT_ALTERNATE_OBJECT_DIRECTORIES: path.join(this.dir, 'objects') }, [0, 1]);
      return out.split('\0').slice(1).filter(Boolean);
    } finally {
      await rm(quarantine, { recursive: true, force: true });
    }
  }

  async merge(base: string, head: string, message: string): Promise<void> {
    await this.fetch();
    const [baseSha, headSha] = (await this.git(['rev-parse', `refs/heads/${base}`, `refs/heads/${head}`])).trim().split('\n');
    await this.git(['merge-base', baseSha!, headSha!], {}, [0, 1]);
    const tree = (await this.git(['merge-tree', '--write-tree', '--name-only', '-z', '--no-messages', baseSha!, headSha!])).split('\0')[0]!;
    const commit = (await this.git(['commit-tree', tree, '-p', baseSha!, '-p', headSha!, '-m', message], IDENTITY)).trim();
    await this.git(['push', '--porcelain', `--force-with-lease=refs/heads/${base}:${baseSha}`, this.url, `${commit}:refs/heads/${base}`]);
    await this.git(['update-ref', `refs/heads/${base}`, commit, baseSha!]);
  }
}

/** Runs both sides of one measurement, alternating which goes first. */
async function pair(i: number, baseline: () => Promise<unknown>, engine: () => Promise<unknown>): Promise<void> {
  for (const side of i % 2 === 0 ? [baseline, engine] : [engine, baseline]) await side();
}

async function main(): Promise<void> {
  const repo = await benchRepo(WORK);
  // Every run starts from the generated main and empty mirrors.
  await execFileAsync('git', ['update-ref', 'refs/heads/main', repo.mainSha], { env: { ...process.env, GIT_DIR: repo.hostDir } });
  const runDir = await mkdtemp(path.join(WORK, 'run-'));
  try {
    const engine = openMirror({ cacheDir: path.join(runDir, 'engine'), projectId: 'bench', url: repo.hostDir, maxAgeMs: 0 });
    const direct = new DirectPlumbing(path.join(runDir, 'direct.git'), repo.hostDir);
    const rows: Row[] = [];

    // Cold mirrors, twice (the second side of a pair reads a warmer page cache).
    const initial: Row = { name: 'initial mirror fetch (cold mirror)', engine: [], baseline: [] };
    for (let i = 0; i < 2; i++) {
      await engine.destroy();
      await rm(direct.dir, { recursive: true, force: true });
      await pair(i, async () => initial.baseline.push(await time(() => direct.init())), async () => initial.engine.push(await time(() => engine.fetch())));
    }
    rows.push(initial);

    const previews = [
      ['merge preview, three-way (clean)', 'bench/three-way'],
      ['merge preview, three-way (1 conflict)', 'bench/conflict'],
      ['merge preview, fast-forward', 'bench/fast-forward'],
    ] as const;
    for (const [name, head] of previews) {
      const row: Row = { name, engine: [], baseline: [] };
      // Warm-up, and a check that both sides see the same conflicts.
      const expected = (await engine.preview('main', head)).conflicts;
      const directConflicts = await direct.preview('main', head);
      if (JSON.stringify(expected) !== JSON.stringify(directConflicts) || (head === 'bench/conflict') !== (expected.length === 1)) {
        throw new Error(`engine and plumbing disagree on ${head}: ${expected.join(',')} / ${directConflicts.join(',')}`);
      }
      for (let i = 0; i < PREVIEW_RUNS; i++) {
        await pair(i, async () => row.baseline.push(await time(() => direct.preview('main', head))), async () => row.engine.push(await time(() => engine.preview('main', head))));
      }
      rows.push(row);
    }

    const merges: Row = { name: 'merge, three-way (fetch, merge, push, update-ref)', engine: [], baseline: [] };
    for (let i = 0; i < MERGE_RUNS; i++) {
      await pair(
        i,
        async () => merges.baseline.push(await time(() => direct.merge('main', `bench/merge-${2 * i}`, `Merge CR #${2 * i}: bench`))),
        async () => merges.engine.push(await time(async () => {
          const result = await engine.merge({ base: 'main', head: `bench/merge-${2 * i + 1}`, message: `Merge CR #${2 * i + 1}: bench` });
          if (result.fast_forward) throw new Error('expected a three-way merge');
        })),
      );
    }
    rows.push(merges);

    // REST API rows (bench/changerequests/rest.ts): preview, merge and 50 concurrent creates through the routes.
    const restNote = await restBenchmark({ hostDir: repo.hostDir, forkSha: repo.mainSha, runDir, direct });

    const ms = (v: number) => `${v.toFixed(1)} ms`;
    const table = rows.map((r) => {
      const e = median(r.engine);
      const b = median(r.baseline);
      return `| ${r.name} | ${r.engine.length} | ${ms(e)} (p90 ${ms(percentile(r.engine, 90))}) | ${ms(b)} (p90 ${ms(percentile(r.baseline, 90))}) | ${(e / b).toFixed(2)}x | ${ms(e - b)} |`;
    });
    const markdown = [
      '## Change requests: git engine',
      '',
      `Repository generated with \`git fast-import\`: ${repo.files.toLocaleString('en')} files, ${repo.commits.toLocaleString('en')} commits on main; head branches fork 100 commits back. ` +
        'Engine: `src/git` (`Mirror.fetch`, `Mirror.preview`, `Mirror.merge`: quarantined objects, lease push, compare-and-swap ref, keep-around refs). ' +
        'Baseline: the same plumbing (rev-parse, merge-base, merge-tree --write-tree, commit-tree, push --force-with-lease, update-ref) run directly with execFile on another bare mirror of the same host, interleaved with the engine runs (alternating which goes first). Medians; the machine is shared, so p90s are noisy.',
      '',
      '| operation | runs | engine median | plumbing median | ratio | overhead |',
      '|---|---|---|---|---|---|',
      ...table,
      '',
      restNote,
    ].join('\n');
    console.log(markdown);
    writeSection('changerequests', markdown);
  } finally {
    await rm(runDir, { recursive: true, force: true });
    await execFileAsync('git', ['update-ref', 'refs/heads/main', repo.mainSha], { env: { ...process.env, GIT_DIR: repo.hostDir } });
  }
}

await main();
