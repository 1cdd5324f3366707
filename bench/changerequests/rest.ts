// REST half of the change-request benchmark: merge preview and merge through
// /v1/projects/:id/change-requests on the API stack `svc dev` runs (local cluster, token
// Secrets, createApp with the kube-backed change-request service), next to the same plumbing
// run directly in the same run; and 50 concurrent creates next to the git work they need.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { median, percentile } from '../lib/report.js';
import { startHarness, type Harness } from '../../test/changerequests/harness.js';

const execFileAsync = promisify(execFile);
const PREVIEW_RUNS = 50;
const MERGE_RUNS = 10;
const CONCURRENT_CREATES = 50;

/** The plumbing baseline of main.ts. */
export interface Plumbing {
  preview(base: string, head: string): Promise<string[]>;
  merge(base: string, head: string, message: string): Promise<void>;
  git(args: string[], env?: Record<string, string>, okCodes?: number[]): Promise<string>;
  fetch(): Promise<string>;
}

export interface RestBenchInput {
  hostDir: string;
  /** A commit on main to fork the merge branches from. */
  forkSha: string;
  runDir: string;
  direct: Plumbing;
}

interface Row { name: string; rest: number[]; baseline: number[] }

async function time(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

async function hostGit(hostDir: string, args: string[], env: Record<string, string> = {}): Promise<string> {
  return (await execFileAsync('git', args, { env: { ...process.env, GIT_DIR: hostDir, ...env }, maxBuffer: 1 << 28 })).stdout.trim();
}

/** A branch on the host: `from` plus one new file, written with plumbing (no checkout). */
async function makeBranch(hostDir: string, runDir: string, name: string, from: string): Promise<void> {
  const index = path.join(runDir, `index-${name.replace(/\//g, '-')}`);
  const env = { GIT_INDEX_FILE: index };
  await hostGit(hostDir, ['read-tree', from], env);
  const blob = (await execFileAsync('sh', ['-c', `printf '%s\\n' "${name}" | git hash-object -w --stdin`], { env: { ...process.env, GIT_DIR: hostDir } })).stdout.trim();
  await hostGit(hostDir, ['update-index', '--add', '--cacheinfo', `100644,${blob},rest-bench/${name.replace(/\//g, '-')}.txt`], env);
  const tree = await hostGit(hostDir, ['write-tree'], env);
  const commit = await hostGit(hostDir, ['commit-tree', tree, '-p', from, '-m', `${name} work`], {
    GIT_AUTHOR_NAME: 'Bench', GIT_AUTHOR_EMAIL: 'bench@example.com', GIT_COMMITTER_NAME: 'Bench', GIT_COMMITTER_EMAIL: 'bench@example.com',
  });
  await hostGit(hostDir, ['update-ref', `refs/heads/${name}`, commit]);
}

async function pair(i: number, baseline: () => Promise<unknown>, rest: () => Promise<unknown>): Promise<void> {
  for (const side of i % 2 === 0 ? [baseline, rest] : [rest, baseline]) await side();
}

function expectStatus(res: { status: number; body: unknown }, status: number, what: string): void {
  if (res.status !== status) throw new Error(`${what}: expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
}

/** Runs the REST rows; returns the markdown of their section. */
export async function restBenchmark(input: RestBenchInput): Promise<string> {
  const { hostDir, forkSha, runDir, direct } = input;
  const names = Array.from({ length: 2 * MERGE_RUNS }, (_, i) => `bench/rest-merge-${i}`);
  for (const name of names) await makeBranch(hostDir, runDir, name, forkSha);
  await direct.fetch();
  let h: Harness | undefined;
  try {
    h = await startHarness({ fetchMaxAgeMs: undefined });
    const project = await h.project('bench', hostDir);
    const base = `/projects/${project.metadata.uid}/change-requests`;
    const harness = h;
    const call = (method: string, url: string, body?: unknown) => harness.call(harness.tokens.admin, method, url, body);
    const rows: Row[] = [];

    const open = async (head: string) => {
      const res = await call('POST', base, { title: `bench ${head}`, head_ref: head });
      expectStatus(res, 201, `create ${head}`);
      return res.body.change_request.cr_id as string;
    };

    const previewCr = await open('bench/three-way');
    const preview: Row = { name: 'merge preview, three-way (clean): REST vs plumbing', rest: [], baseline: [] };
    expectStatus(await call('GET', `${base}/${previewCr}/merge-preview`), 200, 'preview warm-up');
    for (let i = 0; i < PREVIEW_RUNS; i++) {
      await pair(i,
        async () => preview.baseline.push(await time(() => direct.preview('main', 'bench/three-way'))),
        async () => preview.rest.push(await time(async () => expectStatus(await call('GET', `${base}/${previewCr}/merge-preview`), 200, 'preview'))));
    }
    rows.push(preview);

    const merges: Row = { name: 'merge, three-way: REST (gate, merge, push, status) vs plumbing (fetch, merge, push, update-ref)', rest: [], baseline: [] };
    const crIds: string[] = [];
    for (let i = 0; i < MERGE_RUNS; i++) crIds.push(await open(names[2 * i + 1]!));
    for (let i = 0; i < MERGE_RUNS; i++) {
      await pair(i,
        async () => merges.baseline.push(await time(() => direct.merge('main', names[2 * i]!, `Merge CR #${2 * i}: bench`))),
        async () => merges.rest.push(await time(async () => expectStatus(await call('POST', `${base}/${crIds[i]}/merge`), 200, 'merge'))));
    }
    rows.push(merges);

    // 50 concurrent creates, and the git work each needs (forced fetch, two tips, ahead count) run directly, 50 at once.
    const heads = Array.from({ length: CONCURRENT_CREATES }, (_, i) => `bench/rest-create-${i}`);
    for (const head of heads) await makeBranch(hostDir, runDir, head, forkSha);
    const creates: Row = { name: `${CONCURRENT_CREATES} concurrent creates (wall time): REST vs forced fetch + rev-parse + rev-list --count`, rest: [], baseline: [] };
    let numbers: number[] = [];
    await pair(0,
      async () => creates.baseline.push(await time(() => Promise.all(heads.map(async (head) => {
        await direct.fetch();
        await direct.git(['rev-parse', 'refs/heads/main', `refs/heads/${head}`]);
        await direct.git(['rev-list', '--count', `refs/heads/main..refs/heads/${head}`]);
      })))),
      async () => creates.rest.push(await time(async () => {
        const results = await Promise.all(heads.map((head) => call('POST', base, { title: `create ${head}`, head_ref: head })));
        for (const r of results) expectStatus(r, 201, 'concurrent create');
        numbers = results.map((r) => r.body.change_request.number as number);
      })));
    const unique = new Set(numbers).size === numbers.length;
    rows.push(creates);

    const ms = (v: number) => `${v.toFixed(1)} ms`;
    const table = rows.map((r) => {
      const rest = median(r.rest);
      const b = median(r.baseline);
      const target = 1.5 * b + 20;
      return `| ${r.name} | ${r.rest.length} | ${ms(rest)} (p90 ${ms(percentile(r.rest, 90))}) | ${ms(b)} (p90 ${ms(percentile(r.baseline, 90))}) | ${(rest / b).toFixed(2)}x | ${ms(rest - b)} | ${rest <= target ? 'yes' : 'no'} (${ms(target)}) |`;
    });
    return [
      '### Change requests: REST API',
      '',
      'The routes on the API stack `svc dev` runs (in-process here: local cluster, bearer token checked against its Secret, project and change-request resources read from the cluster), ' +
        'over HTTP on loopback, against the same generated host. Baseline: the plumbing of the table above, run directly, interleaved. ' +
        'REST merges include the manifest gate, a forced fetch, the lease push, the status write, the project refresh annotation and an Event.',
      '',
      '| operation | runs | REST median | plumbing median | ratio | overhead | within 1.5x + 20 ms |',
      '|---|---|---|---|---|---|---|',
      ...table,
      '',
      `${CONCURRENT_CREATES} concurrent creates got ${unique ? 'unique' : 'DUPLICATE'} numbers ${Math.min(...numbers)}..${Math.max(...numbers)}.`,
    ].join('\n');
  } finally {
    await h?.close();
    for (const name of [...names, ...Array.from({ length: CONCURRENT_CREATES }, (_, i) => `bench/rest-create-${i}`)]) {
      await hostGit(hostDir, ['update-ref', '-d', `refs/heads/${name}`]).catch(() => undefined);
    }
  }
}
