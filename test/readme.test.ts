// README.md's commands, run as written (issue 23), so the README cannot drift from the product:
// a checkout-like directory, `make dev`'s command line (from the Makefile, not npx, no
// node_modules/.bin on PATH), then every line of every ```sh block after "The two commands",
// in order, in ONE bash (so `source`, the alias and variables carry over, as in a user's shell).
// Skipped: only lines marked `# needs Docker`. A line whose comment says "until Ctrl-C" runs for a
// few seconds and is then interrupted, as a user would; it must not have ended by itself.
// svc dev runs the fixture engine (sessions stay on this machine; test/dev/make-dev.test.ts runs
// the default one), and the daemon block's opencode runs with its network features off.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildArtifacts, cleanupArtifacts } from './daemon/harness.js';
import { REPO_ROOT, removeDevDir } from './helpers/dev.js';
import { waitFor } from './dev/util.js';
import { OPENCODE_OFFLINE_ENV } from './fixtures/model-server.js';

interface ReadmeLine { line: number; text: string; follow: boolean; skip: boolean }
interface ReadmeBlock { line: number; lines: ReadmeLine[] }

/** The ```sh blocks of README.md with their line numbers; `\` continuations joined. */
export function readmeBlocks(markdown: string): ReadmeBlock[] {
  const blocks: ReadmeBlock[] = [];
  const rows = markdown.split('\n');
  for (let i = 0; i < rows.length; i++) {
    if (rows[i]!.trim() !== '```sh') continue;
    const block: ReadmeBlock = { line: i + 1, lines: [] };
    let pending: ReadmeLine | null = null;
    for (i++; i < rows.length && rows[i]!.trim() !== '```'; i++) {
      const row = rows[i]!;
      if (pending) pending.text += `\n${row}`;
      else pending = { line: i + 1, text: row, follow: false, skip: false };
      if (row.endsWith('\\')) continue;
      const comment = commentOf(pending.text);
      pending.skip = /needs Docker/.test(comment);
      pending.follow = /until Ctrl-C/.test(comment);
      if (pending.text.trim()) block.lines.push(pending);
      pending = null;
    }
    blocks.push(block);
  }
  return blocks;
}

/** Index of the `#` that starts a shell comment on the last line of `text`, or -1. */
function commentStart(text: string): number {
  let quote: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) { if (c === quote) quote = null; else if (c === '\\' && quote === '"') i++; continue; }
    if (c === "'" || c === '"') quote = c;
    else if (c === '\\') i++;
    else if (c === '#' && (i === 0 || /\s/.test(text[i - 1]!))) return i;
  }
  return -1;
}
const commentOf = (text: string) => { const at = commentStart(text); return at < 0 ? '' : text.slice(at); };
const withoutComment = (text: string) => { const at = commentStart(text); return (at < 0 ? text : text.slice(0, at)).trimEnd(); };

const FOLLOW_SECONDS = 8;

/** One bash script: every line announced, run, and its failure reported with the README line. */
export function readmeScript(lines: ReadmeLine[]): string {
  const out = ['set -o pipefail', 'shopt -s expand_aliases', '__fail() { echo "::readme-failed $1: $2" >&2; exit 1; }'];
  for (const l of lines) {
    if (l.skip) { out.push(`echo "::readme-skip ${l.line}" >&2`); continue; }
    out.push(`echo "::readme-line ${l.line}" >&2`);
    if (l.follow) {
      out.push(
        `${withoutComment(l.text)} &`,
        '__follow=$!',
        `sleep ${FOLLOW_SECONDS}`,
        `kill -0 $__follow 2>/dev/null || { wait $__follow; __fail ${l.line} "ended by itself (exit $?) before Ctrl-C"; }`,
        'kill -TERM $__follow; wait $__follow 2>/dev/null',
      );
    } else {
      out.push(l.text, `__rc=$?; [ $__rc -eq 0 ] || __fail ${l.line} "exit $__rc"`);
    }
  }
  out.push('echo "::readme-done" >&2');
  return `${out.join('\n')}\n`;
}

/** The Makefile's `dev` recipe. */
function makeDevCommand(): string[] {
  const recipe = /^dev:.*\n\t(.+)$/m.exec(readFileSync(path.join(REPO_ROOT, 'Makefile'), 'utf8'))?.[1];
  if (!recipe) throw new Error('no dev recipe in the Makefile');
  return recipe.trim().split(/\s+/);
}

const CLEAN_PATH = (process.env.PATH ?? '').split(path.delimiter).filter((dir) => dir && !dir.includes('node_modules')).join(path.delimiter);

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

const README = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
const blocks = readmeBlocks(README);

describe('README.md', () => {
  it('links only to files of this repository that exist', () => {
    const links = [...README.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)].map((m) => m[1]!).filter((href) => !/^[a-z]+:/i.test(href));
    expect(links.length).toBeGreaterThan(5);
    for (const href of links) expect(existsSync(path.join(REPO_ROOT, href)), href).toBe(true);
    expect(README).not.toMatch(/\.\.\/shared\//);
  });

  it('starts with the two commands: make dev, make test', () => {
    expect(blocks[0]!.lines.map((l) => withoutComment(l.text))).toEqual(['make dev', 'make test']);
    expect(makeDevCommand()).toEqual(['node', 'bin/svc.js', 'dev']);
  });

  it('marks only Docker lines to skip, and every other line of every block is run below', () => {
    const skipped = blocks.flatMap((b) => b.lines).filter((l) => l.skip);
    for (const l of skipped) expect(l.text).toMatch(/\b(docker|make image)\b/);
  });
});

describe('README.md commands against svc dev, as written', () => {
  let tmp: string;
  let checkout: string;
  let dev: ChildProcess;
  let devOutput = '';
  let home: string;

  beforeAll(async () => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'svc-readme-'));
    // a checkout: this repository's files (dist and node_modules as `make install && make build` leave them)
    checkout = path.join(tmp, 'svc');
    mkdirSync(checkout);
    for (const entry of readdirSync(REPO_ROOT)) {
      if (['.svc-dev', '.svc-agent', '.git'].includes(entry)) continue;
      symlinkSync(path.join(REPO_ROOT, entry), path.join(checkout, entry));
    }
    home = path.join(tmp, 'home');
    mkdirSync(home);
    const { fixtureEngine } = await buildArtifacts();
    const [program, ...args] = makeDevCommand();
    dev = spawn(program!, [...args, '--data-dir', '.svc-dev', '--api-port', '0', '--kube-port', '0', '--engine-command', `'${process.execPath}' '${fixtureEngine}' --port {port}`, '--sandbox-mount', path.dirname(fixtureEngine)], {
      cwd: checkout, env: { PATH: CLEAN_PATH, HOME: home, LANG: process.env.LANG }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    dev.stdout!.on('data', (c: Buffer) => { devOutput += c.toString(); });
    dev.stderr!.on('data', (c: Buffer) => { devOutput += c.toString(); });
    await waitFor('svc dev is running', async () => {
      if (dev.exitCode !== null) throw new Error(`svc dev exited ${dev.exitCode}:\n${devOutput}`);
      return devOutput.includes('svc dev is running.');
    }, 90_000);
  }, 150_000);

  afterAll(async () => {
    if (dev && dev.exitCode === null) {
      const exited = new Promise((resolve) => dev.once('exit', resolve));
      dev.kill('SIGTERM');
      await exited;
    }
    cleanupArtifacts();
    if (tmp) removeDevDir(tmp);
  }, 60_000);

  it('every line works, in order', async () => {
    // the daemon block listens on the README's port 8000
    expect(await portFree(8000), 'port 8000 is taken on this machine: the README\'s svc-agent block needs it').toBe(true);
    const lines = blocks.slice(1).flatMap((b) => b.lines);
    const script = path.join(tmp, 'readme.sh');
    writeFileSync(script, readmeScript(lines));
    // a user who follows the model section has a provider key in the environment (never used here: the fixture engine calls no model)
    const env = { PATH: CLEAN_PATH, HOME: home, LANG: process.env.LANG ?? 'C.UTF-8', TMPDIR: tmp, ANTHROPIC_API_KEY: 'sk-ant-readme-not-a-real-key', ...OPENCODE_OFFLINE_ENV };
    const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const bash = spawn('bash', ['--noprofile', '--norc', script], { cwd: checkout, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let text = '';
      bash.stdout.on('data', (c: Buffer) => { text += c.toString(); });
      bash.stderr.on('data', (c: Buffer) => { text += c.toString(); });
      bash.once('exit', (exitCode) => resolve({ code: exitCode, output: text }));
    });
    const failed = /::readme-failed (\d+): (.*)/.exec(output);
    if (failed || code !== 0) {
      const line = Number(failed?.[1]);
      const text = lines.find((l) => l.line === line)?.text ?? '(unknown)';
      throw new Error(`README.md line ${line} failed (${failed?.[2] ?? `bash exited ${code}`}):\n  ${text}\n--- output (tail) ---\n${output.slice(-6000)}\n--- svc dev (tail) ---\n${devOutput.slice(-3000)}`);
    }
    expect(output).toContain('::readme-done');
    // every line ran (or was a Docker line)
    for (const l of lines) expect(output).toContain(`::readme-${l.skip ? 'skip' : 'line'} ${l.line}\n`);
    // what the README says happens did
    expect(output).toMatch(/valid: examples\/svc\.yaml \(version 2\)/);
    expect(output).toMatch(/Merged CR #1 into main/);
    expect(output).toMatch(/Provider anthropic set/);
    // svc-agent stopped with the README's kill
    await waitFor('port 8000 free again', () => portFree(8000), 30_000);
  }, 600_000);
});
