/* eslint-disable @typescript-eslint/no-explicit-any -- JSON response bodies */
// The golden path of issue 10 §7, offline: `svc dev` with the real opencode as the engine, driven
// by the scripted model (test/fixtures/model-server.ts), registered as the project's model
// provider with `svc gateway providers set` (issue 21): the repository's engine config names no
// provider, the agent reaches the model only through the model gateway with its session key, the
// model sees the real key, the sandbox never does, and the usage routes show the run's tokens.
// The agent commits, pushes its session branch through the git gateway and opens a CR with
// `svc cr open`; a person merges it over REST; the file is on main. A second scripted push to
// main is refused by the git gateway and main does not move.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, removeDevDir, startDev, type DevInstance } from '../helpers/dev.js';
import { makeRepo, run, runOk, waitFor } from '../dev/util.js';
import { startModelServer, toolResults, type ModelServer } from '../fixtures/model-server.js';

const SVC = path.join(REPO_ROOT, 'bin/svc.js');
const OPENCODE_BIN = path.join(REPO_ROOT, 'node_modules', '.bin');
/** The model provider's real key: the model must see it, the sandbox never. */
const MODEL_KEY = `sk-scripted-${randomUUID()}`;

/** Files under `dir` whose bytes contain `needle`. */
function filesContaining(dir: string, needle: string): string[] {
  const found: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = path.join(d, name);
      let st;
      try { st = statSync(p); } catch { continue; }
      if (st.isDirectory()) walk(p);
      else if (st.isFile() && st.size < 50 * 1024 * 1024 && readFileSync(p).includes(needle)) found.push(p);
    }
  };
  if (existsSync(dir)) walk(dir);
  return found;
}

/** The environment of every process of one session's sandbox (svc-agent, opencode, their children). */
function sandboxEnvironments(sessionId: string): string[] {
  return readdirSync('/proc').filter((e) => /^\d+$/.test(e)).flatMap((pid) => {
    try {
      const environ = readFileSync(`/proc/${pid}/environ`, 'latin1');
      return environ.includes(`SVC_SESSION_ID=${sessionId}\0`) ? [environ] : [];
    } catch { return []; }
  });
}

describe.skipIf(!existsSync(path.join(OPENCODE_BIN, 'opencode')))('golden path: the real opencode, a scripted model, svc dev', () => {
  let tmp: string;
  let repo: string;
  let dev: DevInstance;
  let model: ModelServer;
  let projectId: string;
  let sessionId: string;
  let initialMain: string;

  const svc = (...args: string[]) => runOk(process.execPath, [SVC, ...args], dev.env);
  const hostGit = (...args: string[]) => execFileSync('git', args, { cwd: repo, encoding: 'utf8' }).trim();
  const tipOf = (branch: string) => {
    try { return hostGit('rev-parse', '--verify', '-q', `refs/heads/${branch}`); } catch { return null; }
  };
  async function api(method: string, urlPath: string, body?: unknown): Promise<{ status: number; body: any }> {
    const res = await fetch(dev.apiUrl + urlPath, {
      method, headers: { authorization: `Bearer ${dev.token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : {} };
  }

  beforeAll(async () => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'svc-golden-'));
    model = await startModelServer({
      script: [
        { tool: 'bash', args: {
          description: 'commit, push and open a change request',
          command: 'echo "hello from the agent" > agent.txt && git add -A && git commit -q -m "Add agent.txt" && git push -q origin HEAD && svc cr open --title "Agent: add agent.txt"',
        } },
        { tool: 'bash', args: { description: 'try to push to main', command: 'git push origin HEAD:main; echo "push-to-main-exit=$?"' } },
        (request) => ({ text: `Opened the change request. ${toolResults(request).length} tool results seen.` }),
      ],
    });
    // the host: a bare repository (merges push to its main), seeded from a work tree
    const work = path.join(tmp, 'work');
    mkdirSync(work);
    makeRepo(work, { 'README.md': '# golden\n', 'svc.yaml': 'svc_version: 2\ndefault_agent: build\nagents:\n  build:\n    workspace: branch\n' });
    // the engine config names no provider and no model: the model comes from the gateway
    mkdirSync(path.join(work, '.svc', 'engine'), { recursive: true });
    writeFileSync(path.join(work, '.svc', 'engine', 'opencode.json'), JSON.stringify({ $schema: 'https://opencode.ai/config.json', autoupdate: false, share: 'disabled' }, null, 2));
    execFileSync('git', ['add', '-A'], { cwd: work });
    execFileSync('git', ['-c', 'user.name=dev', '-c', 'user.email=dev@example.com', 'commit', '-q', '-m', 'engine config without a provider'], { cwd: work });
    repo = path.join(tmp, 'host.git');
    execFileSync('git', ['clone', '-q', '--bare', work, repo]);
    initialMain = tipOf('main')!;
    dev = await startDev({ dataDir: path.join(tmp, 'dev'), extraEnv: { PATH: `${OPENCODE_BIN}${path.delimiter}${process.env.PATH}` } });
    const created = JSON.parse(await svc('projects', 'create', 'golden', '--repo', repo, '--json')) as any;
    projectId = (created.project ?? created).id;
    await waitFor('project Ready', async () => (await runOk('kubectl', ['get', 'project', 'golden', '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}'], dev.env)) === 'True', 60_000);
    // one key, set once: every session of the project reaches the model through the gateway
    const set = await run(process.execPath, [SVC, 'gateway', 'providers', 'set', 'scripted', '--base-url', model.url, '--project', 'golden'], dev.env, MODEL_KEY);
    expect(set.code, set.stderr).toBe(0);
  }, 150_000);

  afterAll(async () => {
    if (sessionId) await api('POST', `/projects/${projectId}/sessions/${sessionId}/stop`).catch(() => undefined);
    await dev?.stop();
    await model?.close();
    if (tmp) removeDevDir(tmp);
  }, 60_000);

  it('the agent commits, pushes and opens a CR; a person merges it; a push to main is refused', async () => {
    const started = JSON.parse(await svc('sessions', 'start', '--project', 'golden', '--prompt', 'Add agent.txt and open a change request', '--json')) as any;
    sessionId = (started.session ?? started).id;
    const explain = async () => `\nmodel requests: ${JSON.stringify(model.requests.map((r) => r.kind))}\n` +
      `session: ${JSON.stringify((await api('GET', `/projects/${projectId}/sessions/${sessionId}`)).body)}\n` +
      `svc dev output (tail):\n${dev.output().slice(-4000)}`;

    // the CR the agent opened with svc cr open
    const cr = await waitFor('the agent\'s change request', async () => {
      const { body } = await api('GET', `/projects/${projectId}/change-requests?status=all`);
      // a CR is created, then its status written: wait for the whole record
      return (body.change_requests ?? []).find((c: any) => c.head_ref === sessionId && c.head_commit_sha);
    }, 240_000).catch(async (error: Error) => { throw new Error(error.message + (await explain())); });
    expect(cr).toMatchObject({ title: 'Agent: add agent.txt', base_ref: 'main', status: 'open', origin_session_id: sessionId });
    const branchTip = tipOf(sessionId);
    expect(branchTip).toBe(cr.head_commit_sha);
    expect(hostGit('show', `${sessionId}:agent.txt`)).toBe('hello from the agent');
    expect(hostGit('log', '-1', '--format=%s', sessionId)).toBe('Add agent.txt');

    // the second scripted call: a push to main, refused by the gateway
    await waitFor('the second tool result', async () => model.turns().length >= 3, 120_000)
      .catch(async (error: Error) => { throw new Error(error.message + (await explain())); });
    const pushOutput = toolResults(model.turns()[2]!.body!).join('\n');
    expect(pushOutput).toContain('push-to-main-exit=1');
    expect(pushOutput).toContain('refusing to update refs/heads/main');
    expect(tipOf('main')).toBe(initialMain);

    // a person merges it through REST; the file is on main
    const merged = await api('POST', `/projects/${projectId}/change-requests/${cr.cr_id}/merge`, {});
    expect(merged.status).toBe(200);
    expect(merged.body.change_request.status).toBe('merged');
    expect(tipOf('main')).not.toBe(initialMain);
    expect(hostGit('show', 'main:agent.txt')).toBe('hello from the agent');

    // the model gateway: every model request came through it (only it holds the real key), never with the session's key
    const chats = model.requests.filter((r) => r.path.endsWith('/chat/completions'));
    expect(chats.length).toBeGreaterThanOrEqual(3); // the three turns (and the title)
    for (const r of model.requests) {
      expect(r.headers.authorization).toBe(`Bearer ${MODEL_KEY}`);
      expect(JSON.stringify(r.headers)).not.toMatch(/svcllm\./);
    }
    // the sandbox never sees the real key: not in any of its processes' environments, not in its files
    const environments = sandboxEnvironments(sessionId);
    expect(environments.length).toBeGreaterThanOrEqual(2); // svc-agent and opencode
    expect(environments.every((e) => e.includes(`SVC_LLM_BASE_URL=${dev.sandboxApiUrl}/llm\0`) && /SVC_LLM_API_KEY=svcllm\./.test(e))).toBe(true);
    expect(environments.filter((e) => e.includes(MODEL_KEY))).toEqual([]);
    expect(filesContaining(path.join(dev.dataDir, 'sandboxes'), MODEL_KEY)).toEqual([]);
    // the usage routes show the run's tokens (10 in, 5 out per completion)
    const usage = await waitFor('the run\'s usage recorded', async () => {
      const { body } = await api('GET', `/projects/${projectId}/gateway/usage?group_by=session`);
      const mine = (body.groups as any[]).find((g) => g.key === sessionId);
      return mine && mine.input_tokens >= chats.length * 10 ? mine : undefined;
    }, 15_000);
    expect(usage.input_tokens).toBe(usage.output_tokens * 2);
    const logs = (await api('GET', `/projects/${projectId}/gateway/logs?session=${sessionId}`)).body.entries as any[];
    expect(logs.filter((e) => e.model === 'm1' && e.provider === 'scripted' && e.status === 200)).toHaveLength(chats.length);
  }, 420_000);
});
