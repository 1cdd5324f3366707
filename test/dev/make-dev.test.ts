/* eslint-disable @typescript-eslint/no-explicit-any -- JSON output of the CLI */
// `make dev` as a new user runs it (issue 23): `node bin/svc.js dev` (the Makefile's command line,
// not npx) with a PATH that holds no node_modules/.bin, so nothing but the package itself can
// provide the engine. A project on a local repository, a session with the DEFAULT engine (the
// pinned opencode, kept offline by the scripted model the repository's engine config selects):
// the session reaches `running` and the model hears the prompt.
import { spawn, type ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, removeDevDir } from '../helpers/dev.js';
import { makeRepo, runOk, waitFor } from './util.js';
import { OPENCODE_OFFLINE_ENV, startModelServer, type ModelServer } from '../fixtures/model-server.js';
import { parseEnvFile } from '../../src/main/env-file.js';
import { findExecutable } from '../../src/lib/engine-path.js';

/** The Makefile's `dev` recipe, read from the Makefile itself so the two cannot drift. */
function makeDevCommand(): string[] {
  const makefile = readFileSync(path.join(REPO_ROOT, 'Makefile'), 'utf8');
  const recipe = /^dev:.*\n\t(.+)$/m.exec(makefile)?.[1];
  if (!recipe) throw new Error('no dev recipe in the Makefile');
  return recipe.trim().split(/\s+/);
}

/** This machine's PATH without node_modules directories (what a shell has, not npx or npm run). */
const CLEAN_PATH = (process.env.PATH ?? '').split(path.delimiter).filter((dir) => dir && !dir.includes('node_modules')).join(path.delimiter);

describe('make dev: the default engine, started the way the Makefile starts it', () => {
  let tmp: string;
  let model: ModelServer;
  let dev: ChildProcess;
  let output = '';
  let env: NodeJS.ProcessEnv;
  const svc = (...args: string[]) => runOk('node', [path.join(REPO_ROOT, 'bin/svc.js'), ...args], env);

  beforeAll(async () => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'svc-make-dev-'));
    model = await startModelServer({ script: [{ text: 'Hello from the scripted model.' }] });
    const work = path.join(tmp, 'work');
    mkdirSync(path.join(work, '.svc', 'engine'), { recursive: true });
    // the engine config names no provider: the model is the project's gateway provider, set with
    // one command as the README says (a jailed sandbox never reaches a port of the host's loopback)
    writeFileSync(path.join(work, '.svc', 'engine', 'opencode.json'), JSON.stringify({ $schema: 'https://opencode.ai/config.json', autoupdate: false, share: 'disabled' }, null, 2));
    makeRepo(work, { 'README.md': '# demo\n', 'svc.yaml': 'svc_version: 2\ndefault_agent: build\nagents:\n  build:\n    workspace: branch\n' });
    execFileSync('git', ['clone', '-q', '--bare', work, path.join(tmp, 'demo.git')]);

    const [program, ...args] = makeDevCommand();
    expect([program, ...args]).toEqual(['node', 'bin/svc.js', 'dev']);
    // a user's environment: no npm_* variables, no node_modules/.bin; free ports and a temp data dir
    const userEnv = { PATH: CLEAN_PATH, HOME: process.env.HOME, LANG: process.env.LANG };
    dev = spawn(program!, [...args, '--data-dir', path.join(tmp, '.svc-dev'), '--api-port', '0', '--kube-port', '0'], { cwd: REPO_ROOT, env: userEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    dev.stdout!.on('data', (c: Buffer) => { output += c.toString(); });
    dev.stderr!.on('data', (c: Buffer) => { output += c.toString(); });
    await waitFor('svc dev is running', async () => {
      if (dev.exitCode !== null) throw new Error(`svc dev exited ${dev.exitCode}:\n${output}`);
      return output.includes('svc dev is running.');
    }, 90_000);
    env = { PATH: CLEAN_PATH, HOME: process.env.HOME, ...parseEnvFile(readFileSync(path.join(tmp, '.svc-dev', 'env'), 'utf8')) };
  }, 150_000);

  afterAll(async () => {
    if (dev && dev.exitCode === null) {
      const exited = new Promise((resolve) => dev.once('exit', resolve));
      dev.kill('SIGTERM');
      await exited;
    }
    await model?.close();
    if (tmp) removeDevDir(tmp);
  }, 60_000);

  it('a session with the default engine runs and its engine talks to the model', async () => {
    expect(findExecutable('opencode', CLEAN_PATH)).toBeNull(); // only the package can provide it
    await svc('projects', 'create', 'demo', '--repo', path.join(tmp, 'demo.git'));
    await waitFor('project Ready', async () => (await runOk('kubectl', ['get', 'project', 'demo', '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}'], env)) === 'True', 60_000);
    await runOk('node', [path.join(REPO_ROOT, 'bin/svc.js'), 'gateway', 'providers', 'set', 'scripted', '--base-url', model.url, '--project', 'demo'], env, 'sk-scripted-key');
    // opencode stays on this machine: no model catalogue fetch, no self-update (project secrets reach the engine's env)
    for (const [name, value] of Object.entries(OPENCODE_OFFLINE_ENV)) await runOk('node', [path.join(REPO_ROOT, 'bin/svc.js'), 'secrets', 'set', name, '--project', 'demo'], env, value);
    const started = JSON.parse(await svc('sessions', 'start', '--project', 'demo', '--prompt', 'Say hello', '--json')) as any;
    const id = (started.session ?? started).id as string;
    const show = async () => JSON.parse(await svc('sessions', 'show', id, '--project', 'demo', '--json')) as any;
    const explain = async () => `\nsession: ${JSON.stringify(await show().catch((e: Error) => e.message))}\nsvc dev output (tail):\n${output.slice(-4000)}`;
    const session = await waitFor('the session running (or failed)', async () => {
      const shown = await show();
      const s = shown.session ?? shown;
      return s.status === 'running' || s.status === 'failed' ? s : undefined;
    }, 180_000).catch(async (error: Error) => { throw new Error(error.message + (await explain())); });
    expect(session.status, await explain()).toBe('running');
    // the pinned opencode really runs: it sends the prompt to the model, through the gateway
    await waitFor('the prompt at the model', async () => model.requests.some((r) => r.kind === 'turn' && JSON.stringify(r.body?.messages ?? []).includes('Say hello')), 120_000)
      .catch(async (error: Error) => { throw new Error(error.message + (await explain())); });
    expect(output).not.toMatch(/ENOENT/);
    await svc('sessions', 'stop', id, '--project', 'demo');
  }, 400_000);
});
