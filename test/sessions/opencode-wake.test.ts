/* eslint-disable @typescript-eslint/no-explicit-any -- JSON response bodies */
// Issue 22 with the real opencode (the pinned binary) and the scripted model, offline, through
// `svc dev`: a session runs a turn in which the agent writes a file without committing it; the
// session is stopped and woken with a new prompt; the first model request after the wake carries
// the turn before the stop, and the uncommitted file is in the new sandbox.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, removeDevDir, startDev, type DevInstance } from '../helpers/dev.js';
import { makeRepo, runOk, waitFor } from '../dev/util.js';
import { startModelServer, toolResults, type ChatMessage, type ModelServer } from '../fixtures/model-server.js';

const SVC = path.join(REPO_ROOT, 'bin/svc.js');
const OPENCODE_BIN = path.join(REPO_ROOT, 'node_modules', '.bin');
const WORD = 'tangerine-4242';

describe.skipIf(!existsSync(path.join(OPENCODE_BIN, 'opencode')))('the real opencode keeps its conversation and uncommitted work across stop and wake', () => {
  let tmp: string;
  let dev: DevInstance;
  let model: ModelServer;
  let projectId: string;
  let sessionId: string;

  async function api(method: string, urlPath: string, body?: unknown): Promise<{ status: number; body: any }> {
    const res = await fetch(dev.apiUrl + urlPath, {
      method, headers: { authorization: `Bearer ${dev.token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : {} };
  }
  const sandboxDir = () => path.join(dev.dataDir, 'sandboxes', 'default', sessionId);
  const daemonHealth = async (): Promise<any> => {
    try {
      const { address } = JSON.parse(readFileSync(path.join(sandboxDir(), 'state.json'), 'utf8')) as { address: string };
      return await (await fetch(`http://${address}/svc/health`, { signal: AbortSignal.timeout(3000) })).json();
    } catch { return undefined; }
  };
  const status = async () => (await api('GET', `/projects/${projectId}/sessions/${sessionId}`)).body.session?.status;
  const text = (m: ChatMessage) => (typeof m.content === 'string' ? m.content : (m.content ?? []).map((p) => p.text ?? '').join(''));

  beforeAll(async () => {
    // a short data dir: the daemon's unix sockets live below it (at most 107 bytes)
    tmp = mkdtempSync('/tmp/ckoc');
    model = await startModelServer({
      script: [
        { tool: 'write', args: { filePath: 'memo.txt', content: `the word is ${WORD}\n` } },
        { text: 'I wrote memo.txt and did not commit it.' },
        // after the wake: what the agent still knows
        (request) => ({ text: request.messages.some((m) => text(m).includes(WORD)) ? `The word was ${WORD}.` : 'I do not remember.' }),
      ],
    });
    const work = path.join(tmp, 'work');
    mkdirSync(work);
    makeRepo(work, { 'README.md': '# memory\n', 'svc.yaml': 'svc_version: 2\ndefault_agent: build\nagents:\n  build:\n    workspace: branch\n' });
    mkdirSync(path.join(work, '.svc', 'engine'), { recursive: true });
    // the engine config names no provider: the scripted model is the project's gateway provider
    // (a jailed sandbox reaches the API, never a port of the host's loopback)
    writeFileSync(path.join(work, '.svc', 'engine', 'opencode.json'), JSON.stringify({ $schema: 'https://opencode.ai/config.json', autoupdate: false, share: 'disabled' }, null, 2));
    execFileSync('git', ['add', '-A'], { cwd: work });
    execFileSync('git', ['-c', 'user.name=dev', '-c', 'user.email=dev@example.com', 'commit', '-q', '-m', 'engine config without a provider'], { cwd: work });
    const repo = path.join(tmp, 'host.git');
    execFileSync('git', ['clone', '-q', '--bare', work, repo]);
    dev = await startDev({ dataDir: path.join(tmp, 'dev'), extraEnv: { PATH: `${OPENCODE_BIN}${path.delimiter}${process.env.PATH}` } });
    const created = JSON.parse(await runOk(process.execPath, [SVC, 'projects', 'create', 'memory', '--repo', repo, '--json'], dev.env)) as any;
    projectId = (created.project ?? created).id;
    await runOk(process.execPath, [SVC, 'gateway', 'providers', 'set', 'scripted', '--base-url', model.url, '--project', 'memory'], dev.env, 'sk-scripted-key');
    await waitFor('project Ready', async () => (await runOk('kubectl', ['get', 'project', 'memory', '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}'], dev.env)) === 'True', 60_000);
  }, 150_000);

  afterAll(async () => {
    if (sessionId) await api('POST', `/projects/${projectId}/sessions/${sessionId}/stop`).catch(() => undefined);
    await dev?.stop();
    await model?.close();
    if (tmp) removeDevDir(tmp);
  }, 90_000);

  it('the first model request after the wake carries the turn before the stop; the uncommitted file is back', async () => {
    const started = await api('POST', `/projects/${projectId}/sessions`, { prompt: 'Write the word into memo.txt; do not commit.' });
    expect(started.status).toBe(201);
    sessionId = started.body.session.id;
    const explain = async () => `\nmodel requests: ${JSON.stringify(model.requests.map((r) => r.kind))}\nhealth: ${JSON.stringify(await daemonHealth())}\n` +
      `svc dev output (tail):\n${dev.output().slice(-4000)}`;

    // the turn ends (the script's text answer), and its checkpoint is on the host
    const before = await waitFor('the first turn checkpointed', async () => {
      const h = await daemonHealth();
      return model.remaining() === 1 && h?.checkpoint?.writes >= 1 && h.progress?.busy === false ? h : undefined;
    }, 240_000).catch(async (error: Error) => { throw new Error(error.message + (await explain())); });
    const root = before.engine.root_session_id as string;
    expect(readFileSync(path.join(sandboxDir(), 'workspace', 'memo.txt'), 'utf8')).toBe(`the word is ${WORD}\n`);
    const turnsBefore = model.turns().length;

    expect((await api('POST', `/projects/${projectId}/sessions/${sessionId}/stop`)).status).toBe(200);
    await waitFor('stopped', async () => (await status()) === 'stopped', 90_000);
    await waitFor('the sandbox folder gone', async () => !existsSync(sandboxDir()), 60_000);
    expect((await api('POST', `/projects/${projectId}/sessions/${sessionId}/prompt`, { text: 'What was the word?' })).status).toBe(202);

    const first = await waitFor('the first model request after the wake', async () => model.turns()[turnsBefore], 240_000)
      .catch(async (error: Error) => { throw new Error(error.message + (await explain())); });
    const messages = first.body!.messages;
    const users = messages.filter((m) => m.role === 'user').map(text);
    expect(users).toEqual([expect.stringContaining('Write the word into memo.txt'), expect.stringContaining('What was the word?')]);
    expect(toolResults(first.body!).join('\n')).toMatch(/wrote file successfully/i);
    expect(messages.filter((m) => m.role === 'assistant').map(text)).toContain('I wrote memo.txt and did not commit it.');
    expect(messages.some((m) => (m.tool_calls ?? []).some((c) => c.function.arguments.includes(WORD)))).toBe(true);

    const after = await daemonHealth();
    expect(after.engine.root_session_id).toBe(root);
    expect(after.checkpoint.restored?.sha).toBe(before.checkpoint.sha);
    expect(after.checkpoint.conversation.restored).toMatchObject({ session_id: root });
    const workspace = path.join(sandboxDir(), 'workspace');
    expect(readFileSync(path.join(workspace, 'memo.txt'), 'utf8')).toBe(`the word is ${WORD}\n`);
    expect(execFileSync('git', ['-c', 'safe.directory=*', 'status', '--porcelain'], { cwd: workspace, encoding: 'utf8' })).toContain('?? memo.txt');
  }, 600_000);
});
