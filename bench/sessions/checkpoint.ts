// Checkpoint benchmark (issue 22): what a checkpoint adds to a stop and to a wake, for a workspace
// of 1,000 files with 50 changed (40 modified, 5 new, 5 deleted), next to `git add -A && git
// commit` of the same tree in the same run.
//  A. svc-agent alone (the built daemon, the fixture engine, the project's host a bare repository
//     on disk): SIGTERM -> exit with checkpoints on and off; spawn -> health `ok` on a fresh
//     workspace and engine home with a checkpoint to restore and without.
//  B. through `svc dev` (the git gateway, the controllers): POST .../stop -> the sandbox process
//     gone, and POST .../prompt (wake) -> `running`, in a project with checkpoints on and one with
//     `spec.checkpoints: false`.
// Run (after `make build`): npx tsx bench/sessions/checkpoint.ts (bench/sessions/main.ts runs it too).
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { median, percentile, writeSection } from '../lib/report.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const RUNS = Number(process.env.BENCH_CHECKPOINT_RUNS ?? 7);
const DEV_RUNS = Number(process.env.BENCH_CHECKPOINT_DEV_RUNS ?? 5);
const FILES = 1000;
/** A session of its own per round: each round's stop writes the checkpoint its wake restores. */
const sessionOf = (round: number) => `6a1f3c2e-8b4d-4e5f-9a0b-${String(round).padStart(12, '0')}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const GIT_ENV = { ...process.env, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@b', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@b' };
const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, env: GIT_ENV, encoding: 'utf8' }).trim();

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** File number `n` of the workspace. */
const existing = (n: number) => `src/m${n % 20}/file${n}.ts`;

/** 1,000 files of about 2 KiB in 20 folders. */
function workspaceFiles(): Record<string, string> {
  const files: Record<string, string> = { '.gitignore': 'node_modules/\n*.log\n' };
  for (let i = 0; i < FILES - 1; i++) files[existing(i)] = `// file ${i}\n${`export const v${i} = ${i};\n`.repeat(90)}`;
  return files;
}

/** The 50 changes: 40 modified, 5 new, 5 deleted (paths relative to the workspace). */
function change(dir: string, round: number): void {
  for (let i = 0; i < 40; i++) writeFileSync(path.join(dir, existing(i * 7)), `// changed in round ${round}\n${'export const x = 1;\n'.repeat(100)}`);
  for (let i = 0; i < 5; i++) writeFileSync(path.join(dir, `src/new${round}-${i}.ts`), `export const n = ${i};\n`.repeat(50));
  for (let i = 0; i < 5; i++) rmSync(path.join(dir, existing(500 + i * 11)));
}

function seedRepo(work: string): string {
  const seed = path.join(work, 'seed');
  mkdirSync(seed);
  git(seed, 'init', '-q', '-b', 'main');
  for (const [file, content] of Object.entries(workspaceFiles())) {
    mkdirSync(path.dirname(path.join(seed, file)), { recursive: true });
    writeFileSync(path.join(seed, file), content);
  }
  git(seed, 'add', '-A');
  git(seed, 'commit', '-q', '-m', 'a workspace of 1,000 files');
  const bare = path.join(work, 'host.git');
  git(work, 'clone', '-q', '--bare', seed, bare);
  return bare;
}

interface Daemon { child: ChildProcess; port: number; output: () => string }

async function startDaemon(daemon: string, engine: string, dirs: { workspace: string; home: string }, round: number, env: Record<string, string>): Promise<Daemon> {
  const child = spawn(process.execPath, [daemon], {
    env: {
      PATH: process.env.PATH, SVC_PROJECT_ID: '9b2d4c6e-1a3b-4c5d-8e9f-0a1b2c3d4e5f', SVC_SESSION_ID: sessionOf(round), SVC_SANDBOX_TOKEN: 'bench-token-0123456789abcdef',
      SVC_SERVICE_HOST: '127.0.0.1', SVC_SERVICE_PORT: '0', SVC_WORKSPACE: dirs.workspace, SVC_ENGINE_HOME: dirs.home, SVC_ENGINE_PORT: String(await freePort()),
      SVC_ENGINE_COMMAND: `'${process.execPath}' '${engine}' serve --port {port}`, SVC_PROJECT_AUTO_CLONE: '1', SVC_BASE_REF: 'main', SVC_BOOTSTRAP_ENGINE_SESSION: '1',
      SVC_REPO_URL: path.join(path.dirname(dirs.workspace), 'host.git'), // host.git lies in the run's folder, beside the workspaces
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stderr!.on('data', (d: Buffer) => { output += d.toString(); });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      output += d.toString();
      const m = /listening on http:\/\/[^:]+:(\d+)/.exec(output);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`svc-agent exited ${code}: ${output}`)));
  });
  return { child, port, output: () => output };
}

async function untilOk(d: Daemon): Promise<Record<string, any>> { // eslint-disable-line @typescript-eslint/no-explicit-any
  for (;;) {
    try {
      const h = await (await fetch(`http://127.0.0.1:${d.port}/svc/health`)).json() as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
      if (h.status === 'ok' && h.engine.root_session_id) return h;
      if (h.status === 'failed') throw new Error(`daemon failed: ${JSON.stringify(h)}\n${d.output()}`);
    } catch (error) {
      if ((error as Error).message.startsWith('daemon failed')) throw error;
    }
    await sleep(10);
  }
}

async function stopMs(d: Daemon): Promise<number> {
  const exited = new Promise((r) => d.child.once('exit', r));
  const started = performance.now();
  d.child.kill('SIGTERM');
  await exited;
  return performance.now() - started;
}

const fmt = (v: number) => `${v.toFixed(0)} ms`;
const stat = (values: number[]) => `${fmt(median(values))} | ${fmt(percentile(values, 95))}`;

async function daemonPart(work: string, bare: string, daemon: string, engine: string) {
  const scratch = (name: string) => ({ workspace: mkdtempSync(path.join(work, `${name}-ws-`)), home: mkdtempSync(path.join(work, `${name}-home-`)) });
  const stopOn: number[] = []; const stopOff: number[] = []; const wakeRestore: number[] = []; const wakePlain: number[] = []; const baseline: number[] = []; const restoredFiles: number[] = [];
  for (let round = 0; round < RUNS; round++) {
    // a stop with checkpoints: the 50 changes are saved and pushed on SIGTERM
    let dirs = scratch('on');
    let d = await startDaemon(daemon, engine, dirs, round, {});
    await untilOk(d);
    change(dirs.workspace, round);
    stopOn.push(await stopMs(d));
    if (!/checkpoint on stop: written/.test(d.output())) throw new Error(`no checkpoint on stop:\n${d.output()}`);
    // the same stop without
    dirs = scratch('off');
    d = await startDaemon(daemon, engine, dirs, round, { SVC_CHECKPOINTS: '0' });
    await untilOk(d);
    change(dirs.workspace, round);
    stopOff.push(await stopMs(d));
    // a wake restoring it (the tree and the conversation), and one with nothing to restore
    dirs = scratch('wake');
    let started = performance.now();
    d = await startDaemon(daemon, engine, dirs, round, {});
    const h = await untilOk(d);
    wakeRestore.push(performance.now() - started);
    if (!h.checkpoint.restored) throw new Error(`nothing restored: ${JSON.stringify(h.checkpoint)}`);
    restoredFiles.push(git(dirs.workspace, 'status', '--porcelain').split('\n').length);
    await stopMs(d);
    dirs = scratch('plain');
    started = performance.now();
    d = await startDaemon(daemon, engine, dirs, round, { SVC_CHECKPOINTS: '0' });
    await untilOk(d);
    wakePlain.push(performance.now() - started);
    await stopMs(d);
    // the baseline: git add -A && git commit of the same 50 changes, in a clone of the same tree
    const clone = mkdtempSync(path.join(work, 'commit-'));
    git(work, 'clone', '-q', '--branch', 'main', bare, clone);
    change(clone, round);
    started = performance.now();
    execFileSync('sh', ['-c', 'git add -A && git commit -q -m work'], { cwd: clone, env: GIT_ENV });
    baseline.push(performance.now() - started);
    for (const dir of [clone]) rmSync(dir, { recursive: true, force: true });
  }
  return { stopOn, stopOff, wakeRestore, wakePlain, baseline, restoredFiles };
}

async function devPart(work: string, bare: string, engine: string) {
  const dataDir = mkdtempSync('/tmp/ckb'); // short: unix socket paths below it
  let output = '';
  const dev = spawn(process.execPath, [path.join(ROOT, 'bin/svc.js'), 'dev', '--data-dir', dataDir, '--api-port', '0', '--kube-port', '0',
    '--engine-command', `'${process.execPath}' '${engine}' serve --port {port}`, '--sandbox-mount', path.dirname(engine), '--max-sessions', '100'], { env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  dev.stdout!.on('data', (c: Buffer) => { output += c.toString(); });
  dev.stderr!.on('data', (c: Buffer) => { output += c.toString(); });
  try {
    // leading (its controllers run) and running (the env file written): the operator may lead first
    while (!output.includes(': leading') || !output.includes('svc dev is running.')) await sleep(100);
    const env = Object.fromEntries([...readFileSync(path.join(dataDir, 'env'), 'utf8').matchAll(/^export ([A-Z_]+)='([^']*)'$/gm)].map((m) => [m[1]!, m[2]!]));
    const kenv = { ...process.env, KUBECONFIG: env.KUBECONFIG };
    const uids: Record<string, string> = {};
    for (const [name, checkpoints] of [['on', true], ['off', false]] as const) {
      execFileSync('kubectl', ['apply', '-f', '-'], { env: kenv, input: JSON.stringify({ apiVersion: 'svc.dev/v1alpha1', kind: 'Project', metadata: { name }, spec: { repoUrl: bare, defaultBranch: 'main', checkpoints } }) });
      for (;;) {
        uids[name] = execFileSync('kubectl', ['get', 'project', name, '-o', 'jsonpath={.metadata.uid}'], { env: kenv, encoding: 'utf8' });
        if (uids[name]) break;
        await sleep(100);
      }
    }
    const call = async (project: string, method: string, url: string, body?: unknown) => {
      const res = await fetch(`${env.SVC_API_URL}/projects/${uids[project]}/sessions${url}`, {
        method, headers: { authorization: `Bearer ${env.SVC_CLI_TOKEN}`, 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined,
      });
      const answer = (await res.json()) as { session: { id: string; status: string } };
      if (!answer.session) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(answer)}`);
      return answer;
    };
    const until = async (project: string, id: string, status: string) => {
      for (;;) {
        const seen = (await call(project, 'GET', `/${id}`)).session.status;
        if (seen === status) return;
        if (seen === 'failed') throw new Error(`session ${id} failed (waiting for ${status})\n${output.slice(-3000)}`);
        await sleep(20);
      }
    };
    const statePath = (id: string) => path.join(dataDir, 'sandboxes', 'default', id, 'state.json');
    const running = (pid: number) => { try { return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8')); } catch { return false; } };
    // the fixture engine writes the 50 changes in a turn that does not end (nothing checkpointed before the stop)
    const writes: Record<string, string> = {};
    // (short contents: a prompt has a size limit; the cost is in the number of files, not their size)
    for (let i = 0; i < 40; i++) writes[existing(i * 7)] = `// changed\nexport const x = ${i};\n`;
    for (let i = 0; i < 5; i++) writes[`src/new-${i}.ts`] = `export const n = ${i};\n`;
    const deletes = Array.from({ length: 5 }, (_, i) => existing(500 + i * 11));
    const directive = `#fixture ${JSON.stringify({ write: writes, delete: deletes })}`;
    const result: Record<string, { stop: number[]; wake: number[] }> = { on: { stop: [], wake: [] }, off: { stop: [], wake: [] } };
    for (let round = 0; round < DEV_RUNS; round++) {
      for (const project of ['on', 'off']) {
        const { session } = await call(project, 'POST', '', { prompt: directive });
        await until(project, session.id, 'running');
        await sleep(500); // the prompt's files are written
        const pid = (JSON.parse(readFileSync(statePath(session.id), 'utf8')) as { pid: number }).pid;
        let started = performance.now();
        await call(project, 'POST', `/${session.id}/stop`);
        while (running(pid)) await sleep(10);
        result[project]!.stop.push(performance.now() - started);
        await until(project, session.id, 'stopped');
        while (existsSync(statePath(session.id))) await sleep(20);
        started = performance.now();
        await call(project, 'POST', `/${session.id}/prompt`, { text: '#fixture {"end":true}' });
        await until(project, session.id, 'running');
        result[project]!.wake.push(performance.now() - started);
        await call(project, 'POST', `/${session.id}/stop`);
      }
    }
    return result;
  } finally {
    dev.kill('SIGTERM');
    await new Promise((r) => dev.once('exit', r));
    if (!process.env.BENCH_KEEP) rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function runCheckpointBench(): Promise<void> {
  const work = mkdtempSync('/tmp/ckw');
  // its own folder, readable by the sandboxes' uids: shown to the jailed sandboxes with --sandbox-mount
  const engineDir = path.join(work, 'engine');
  mkdirSync(engineDir, { mode: 0o755 });
  const engine = path.join(engineDir, 'fixture-engine.mjs');
  await build({ entryPoints: [path.join(ROOT, 'test/fixtures/engine/main.ts')], outfile: engine, bundle: true, platform: 'node', format: 'esm', target: 'node20', logLevel: 'error' });
  const daemon = path.join(ROOT, 'bin/svc-agent.js');
  try {
    const bare = seedRepo(work);
    const a = await daemonPart(work, bare, daemon, engine);
    const b = await devPart(work, bare, engine);
    const added = (on: number[], off: number[]) => fmt(median(on) - median(off));
    writeSection('sessions-checkpoint', `## sessions: what a checkpoint adds to a stop and a wake

A workspace of ${FILES.toLocaleString('en')} files (about 2 KiB each) with 50 changed (40 modified, 5 new, 5 deleted),
the fixture engine (test/fixtures/engine). bench/sessions/checkpoint.ts.

**svc-agent alone** (the project's host a bare repository on disk; ${RUNS} runs each): SIGTERM -> the
daemon exited, with the 50 changes in the working tree; spawn -> health \`ok\` on a fresh workspace
and engine home (clone, restore, engine start, root session).

| measure | median | p95 |
|---|---|---|
| stop, checkpoints on (checkpoint written and pushed on SIGTERM) | ${stat(a.stopOn)} |
| stop, checkpoints off | ${stat(a.stopOff)} |
| wake, a checkpoint restored (tree and conversation, ${median(a.restoredFiles)} paths changed in \`git status\`) | ${stat(a.wakeRestore)} |
| wake, nothing to restore (checkpoints off) | ${stat(a.wakePlain)} |
| baseline: \`git add -A && git commit\` of the same 50 changes | ${stat(a.baseline)} |

A checkpoint adds ${added(a.stopOn, a.stopOff)} to a stop (${(((median(a.stopOn) - median(a.stopOff)) / median(a.baseline))).toFixed(1)}× the baseline commit, which pushes
nothing) and ${added(a.wakeRestore, a.wakePlain)} to a wake.

**Through \`svc dev\`** (the git gateway relays the checkpoint to the host; ${DEV_RUNS} sessions each): POST .../stop ->
the sandbox process gone; POST .../prompt on the stopped session -> \`running\`.

| measure | checkpoints on: median, p95 | checkpoints off (\`spec.checkpoints: false\`): median, p95 | added (medians) |
|---|---|---|---|
| stop | ${fmt(median(b.on!.stop))}, ${fmt(percentile(b.on!.stop, 95))} | ${fmt(median(b.off!.stop))}, ${fmt(percentile(b.off!.stop, 95))} | ${added(b.on!.stop, b.off!.stop)} |
| wake | ${fmt(median(b.on!.wake))}, ${fmt(percentile(b.on!.wake, 95))} | ${fmt(median(b.off!.wake))}, ${fmt(percentile(b.off!.wake, 95))} | ${added(b.on!.wake, b.off!.wake)} |

Through \`svc dev\` the stop pays the gateway's relay (a fresh fetch of the mirror for the push's
advertisement, receive-pack, the hook's push to the host) besides the checkpoint itself; a wake is
dominated by the controllers (branch, Secrets, Sandbox, health polling) and varies by seconds on a
shared machine: the svc-agent rows above isolate what the restore adds (a fetch, \`git restore\` and
the engine's import of the conversation, a process start of its own).`);
    process.stdout.write(readFileSync(path.join(ROOT, 'docs/benchmarks.md'), 'utf8').split('<!-- bench:sessions-checkpoint:start -->')[1]!.split('<!-- bench:sessions-checkpoint:end -->')[0]!);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  runCheckpointBench().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  });
}
