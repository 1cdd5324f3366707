// Generates (once, cached under bench/.work/) the benchmark host repository with
// `git fast-import`: ~50,000 files, ~10,000 commits on main, and head branches for
// previews and merges.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** Bump when the shape below changes: the cache is rebuilt. */
const VERSION = 2;
const DIRS = 500;
const FILES_PER_DIR = 100; // 50,000 files
const COMMITS = 10_000;
const FILES_PER_COMMIT = 3;
/** Main only ever touches dirs below this; head branches touch the ones above (clean merges). */
const MAIN_DIRS = 400;
export const MERGE_BRANCHES = 40;

export interface BenchRepo {
  hostDir: string;
  mainSha: string;
  files: number;
  commits: number;
}

const filePath = (dir: number, file: number) => `src/d${String(dir).padStart(3, '0')}/f${String(file).padStart(2, '0')}.txt`;

function data(text: string): string {
  return `data ${Buffer.byteLength(text)}\n${text}\n`;
}

function commitHeader(ref: string, mark: number, time: number, message: string, from: number | null): string {
  const who = `Bench <bench@example.com> ${time} +0000`;
  return `commit ${ref}\nmark :${mark}\nauthor ${who}\ncommitter ${who}\n${data(message)}${from ? `from :${from}\n` : ''}`;
}

function* stream(): Generator<string> {
  const t0 = 1_700_000_000;
  let header = commitHeader('refs/heads/main', 1, t0, 'initial import', null);
  let body = '';
  for (let d = 0; d < DIRS; d++) {
    for (let f = 0; f < FILES_PER_DIR; f++) body += `M 100644 inline ${filePath(d, f)}\n${data(`file ${d}/${f}\nrevision 0\n`)}`;
    if (d % 50 === 49) { yield header + body; header = ''; body = ''; }
  }
  for (let c = 2; c <= COMMITS; c++) {
    let out = commitHeader('refs/heads/main', c, t0 + c * 60, `change ${c}`, c - 1);
    for (let k = 0; k < FILES_PER_COMMIT; k++) {
      const dir = (c * 7 + k * 131) % MAIN_DIRS;
      const file = (c * 13 + k) % FILES_PER_DIR;
      out += `M 100644 inline ${filePath(dir, file)}\n${data(`file ${dir}/${file}\nrevision ${c}\n`)}`;
    }
    yield out;
  }
  // Head branches fork 100 commits back and change files main never touches.
  const fork = COMMITS - 100;
  let mark = COMMITS + 1;
  const branch = (name: string, from: number, dir: number, file: number) => {
    const out = commitHeader(`refs/heads/${name}`, mark, t0 + (COMMITS + mark) * 60, `${name} work`, from)
      + `M 100644 inline ${filePath(dir, file)}\n${data(`file ${dir}/${file}\nchanged on ${name}\n`)}`;
    mark++;
    return out;
  };
  yield branch('bench/three-way', fork, MAIN_DIRS, 0);
  yield branch('bench/fast-forward', COMMITS, MAIN_DIRS, 1);
  // A file main changed after the fork (commit COMMITS - 10, its first file): a content conflict.
  const changedOnMain = COMMITS - 10;
  yield branch('bench/conflict', fork, (changedOnMain * 7) % MAIN_DIRS, (changedOnMain * 13) % FILES_PER_DIR);
  for (let i = 0; i < MERGE_BRANCHES; i++) yield branch(`bench/merge-${i}`, fork, MAIN_DIRS + 1 + Math.floor(i / FILES_PER_DIR), i % FILES_PER_DIR);
}

async function fastImport(hostDir: string): Promise<void> {
  execFileSync('git', ['init', '--quiet', '--bare', hostDir]);
  const child = spawn('git', ['fast-import', '--quiet'], { cwd: hostDir, env: { ...process.env, GIT_DIR: hostDir }, stdio: ['pipe', 'inherit', 'inherit'] });
  const done = new Promise<void>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`git fast-import exited ${code}`))));
  });
  for (const chunk of stream()) {
    if (!child.stdin.write(chunk)) await new Promise((resolve) => child.stdin.once('drain', resolve));
  }
  child.stdin.end();
  await done;
}

/** The cached repository, generated on first use (or when VERSION changed). */
export async function benchRepo(workDir: string): Promise<BenchRepo> {
  const hostDir = path.join(workDir, 'host.git');
  const stateFile = path.join(workDir, 'state.json');
  if (existsSync(stateFile)) {
    const state = JSON.parse(readFileSync(stateFile, 'utf8')) as BenchRepo & { version: number };
    if (state.version === VERSION && existsSync(hostDir)) return state;
  }
  rmSync(workDir, { recursive: true, force: true });
  mkdirSync(workDir, { recursive: true });
  const started = Date.now();
  await fastImport(hostDir);
  const mainSha = execFileSync('git', ['rev-parse', 'refs/heads/main'], { env: { ...process.env, GIT_DIR: hostDir }, encoding: 'utf8' }).trim();
  const repo: BenchRepo = { hostDir, mainSha, files: DIRS * FILES_PER_DIR, commits: COMMITS };
  writeFileSync(stateFile, JSON.stringify({ version: VERSION, ...repo }, null, 2));
  console.log(`generated ${repo.files} files, ${repo.commits} commits in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return repo;
}
