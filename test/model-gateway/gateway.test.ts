/* eslint-disable @typescript-eslint/no-explicit-any -- JSON response bodies */
// The model gateway through `svc dev` (the built CLI, the fixture engine in real sandboxes, fake
// OpenAI- and Anthropic-style upstreams on loopback): provider keys (CLI and REST, every 400),
// what a session's sandbox gets, the data path for both protocols streaming and not (the upstream
// sees the real key, never the session's; the client sees the answer as the upstream sent it),
// 401/404/405, usage and logs, budgets (project period and per session, 429 before the provider,
// one Warning Event), metrics, capabilities (403 for each missing one), dead keys after stop, and
// the counters surviving a restart of svc dev.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newToken, tokenSecret } from '../../src/lib/api-tokens.js';
import { buildArtifacts } from '../daemon/harness.js';
import { REPO_ROOT, removeDevDir, startDev, type DevInstance } from '../helpers/dev.js';
import { makeRepo, run, runOk, waitFor } from '../dev/util.js';
import { MODEL_USAGE, startModelServer, type ModelServer } from '../fixtures/model-server.js';
import { startAnthropicServer, type AnthropicServer } from '../fixtures/anthropic-server.js';

const SVC = path.join(REPO_ROOT, 'bin/svc.js');
const OPENAI_KEY = `sk-local-real-${randomUUID()}`;
const ANTHROPIC_KEY = `sk-ant-real-${randomUUID()}`;
const PROMPT_TEXT = `a prompt the logs must never hold ${randomUUID()}`;

let dev: DevInstance;
let devArgs: string[];
let model: ModelServer;
let anthropic: AnthropicServer;
let projectId: string;
let bareProjectId: string;
let sessionId: string;
let sessionKey: string;

interface Answer { status: number; body: any; text: string; headers: Headers }

async function call(method: string, url: string, options: { body?: unknown; token?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  const token = options.token === undefined ? dev.token : options.token;
  const res = await fetch(url.startsWith('http') ? url : `${dev.apiUrl}${url}`, {
    method,
    redirect: 'manual', // what the gateway answers, not where a client would go next
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...options.headers,
    },
    body: options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body),
  });
  const text = await res.text();
  let body: any = {};
  try { body = text ? JSON.parse(text) : {}; } catch { body = text; }
  return { status: res.status, body, text, headers: res.headers };
}

const gw = (project = projectId) => `/projects/${project}/gateway`;
const svc = (args: string[], input?: string) => run(process.execPath, [SVC, ...args], dev.env, input);
const llm = (path: string, key: string | null, body?: unknown, headers: Record<string, string> = {}) =>
  call(body === undefined ? 'GET' : 'POST', `/llm/${path}`, { body, token: '', headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers } });
const chat = (extra: Record<string, unknown> = {}) => ({ model: 'm1', messages: [{ role: 'user', content: PROMPT_TEXT }], ...extra });
const anthropicBody = (extra: Record<string, unknown> = {}) => ({ model: 'claude-fake-1', max_tokens: 64, messages: [{ role: 'user', content: PROMPT_TEXT }], ...extra });

async function mint(grant: { access: 'read' | 'write'; projectUid?: string; capabilities: string[] }): Promise<string> {
  const token = newToken();
  await runOk('kubectl', ['apply', '-f', '-'], dev.env, JSON.stringify(tokenSecret(token, { userId: randomUUID(), ...grant }, 'default')));
  return token;
}

async function startSession(project: string): Promise<string> {
  const created = await call('POST', `/projects/${project}/sessions`, { body: { prompt: 'work' } });
  expect(created.status).toBe(201);
  const id = created.body.session.id as string;
  await waitFor(`session ${id} running`, async () => (await call('GET', `/projects/${project}/sessions/${id}`)).body.session?.status === 'running', 60_000);
  return id;
}

const engineEnv = async (project: string, id: string) => (await call('GET', `/projects/${project}/sessions/${id}/engine/fixture/env`)).body as Record<string, string>;
const sessionUsage = async (id: string) => ((await call('GET', `${gw()}/usage?group_by=session`)).body.groups as any[]).find((g) => g.key === id);
/** Waits until the API wrote what it counted (the recorder writes right after each answer). */
const usageSettled = (id: string, requests: number) => waitFor(`${requests} requests of ${id} recorded`, async () => ((await sessionUsage(id))?.requests ?? 0) >= requests, 15_000);

/** The status of a request sent with exactly this path (no URL normalization). */
function rawStatus(method: string, rawPath: string, key: string): Promise<number> {
  const url = new URL(dev.apiUrl);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, method, path: rawPath, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end('{}');
  });
}

/** Every file under `dir` whose bytes contain `needle`. */
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

beforeAll(async () => {
  const { fixtureEngine } = await buildArtifacts();
  model = await startModelServer({ usage: 'when-asked' });
  anthropic = await startAnthropicServer({ apiKey: ANTHROPIC_KEY });
  devArgs = ['--engine-command', `'${process.execPath}' '${fixtureEngine}' --port {port}`, '--sandbox-mount', path.dirname(fixtureEngine), '--idle-timeout', '30m'];
  dev = await startDev({ args: devArgs, extraEnv: { SVC_LLM_MAX_REQUEST_BYTES: String(1024 * 1024) } });
  const repo = path.join(dev.dataDir, 'repo');
  makeRepo(repo, { 'README.md': '# gateway\n' });
  const create = async (name: string) => {
    const created = JSON.parse(await runOk(process.execPath, [SVC, 'projects', 'create', name, '--repo', repo, '--json'], dev.env));
    return (created.project ?? created).id as string;
  };
  projectId = await create('lab');
  bareProjectId = await create('bare');
}, 120_000);

afterAll(async () => {
  if (sessionId) await call('POST', `/projects/${projectId}/sessions/${sessionId}/stop`).catch(() => undefined);
  await dev?.stop();
  await model?.close();
  await anthropic?.close();
  if (dev) removeDevDir(dev.dataDir);
}, 60_000);

describe('provider keys', () => {
  it('svc gateway providers set reads the key from stdin; ls shows no key', async () => {
    const set = await svc(['gateway', 'providers', 'set', 'local', '--base-url', model.url, '--project', 'lab'], `${OPENAI_KEY}\n`);
    expect(set.stderr).toBe('');
    expect(set.code).toBe(0);
    expect(set.stdout).toContain('Provider local set');
    const anth = await svc(['gateway', 'providers', 'set', 'claude', '--protocol', 'anthropic', '--base-url', `${anthropic.url}/`, '--project', 'lab', '--json'], ANTHROPIC_KEY);
    expect(anth.code).toBe(0);
    expect(JSON.parse(anth.stdout)).toEqual({ name: 'claude', set: true });
    // no key on stdin (a terminal or nothing): a usage error, nothing set
    expect((await svc(['gateway', 'providers', 'set', 'empty', '--base-url', model.url, '--project', 'lab'], '')).code).toBe(2);
    expect((await svc(['gateway', 'providers', 'set', 'empty', '--api-key', '', '--base-url', model.url, '--project', 'lab'], '')).code).toBe(2);
    // or from --api-key, the person's choice (as `svc secrets set --value`)
    const flagKey = `sk-from-a-flag-${randomUUID()}`;
    const flag = await svc(['gateway', 'providers', 'set', 'flagged', '--api-key', flagKey, '--base-url', model.url, '--project', 'lab']);
    expect(flag.code, flag.stderr).toBe(0);
    expect(flag.stdout + flag.stderr).not.toContain(flagKey);
    const stored = await runOk('kubectl', ['get', 'secret', 'lab-llm-providers', '-o', 'json'], dev.env);
    expect(stored.includes(flagKey) || stored.includes(Buffer.from(flagKey).toString('base64'))).toBe(true);
    expect((await svc(['gateway', 'providers', 'rm', 'flagged', '--project', 'lab'])).code).toBe(0);

    const listed = await svc(['gateway', 'providers', 'ls', '--project', 'lab', '--json']);
    expect(JSON.parse(listed.stdout).providers).toEqual([
      { name: 'claude', protocol: 'anthropic', base_url: anthropic.url, updated_at: expect.any(String) },
      { name: 'local', protocol: 'openai', base_url: model.url, updated_at: expect.any(String) },
    ]);
    const table = await svc(['gateway', 'providers', 'ls', '--project', 'lab']);
    expect(table.stdout).toMatch(/claude\s+anthropic/);
    for (const out of [listed.stdout, table.stdout]) {
      expect(out).not.toContain(OPENAI_KEY);
      expect(out).not.toContain(ANTHROPIC_KEY);
    }
  });

  it('REST: built-in defaults, replace, remove, and a clear 400 for every bad input (nothing changes)', async () => {
    expect((await call('PUT', `${gw()}/providers/openai`, { body: { api_key: 'sk-openai-x' } })).status).toBe(204);
    expect((await call('PUT', `${gw()}/providers/anthropic`, { body: { api_key: 'sk-ant-x' } })).status).toBe(204);
    let providers = (await call('GET', `${gw()}/providers`)).body.providers as any[];
    expect(providers.find((p) => p.name === 'openai')).toMatchObject({ protocol: 'openai', base_url: 'https://api.openai.com/v1' });
    expect(providers.find((p) => p.name === 'anthropic')).toMatchObject({ protocol: 'anthropic', base_url: 'https://api.anthropic.com/v1' });

    const bad: [string, unknown, RegExp][] = [
      ['Bad_Name', { api_key: 'k' }, /slug/],
      ['other', { api_key: 'k' }, /base_url is required/],
      ['other', { base_url: 'http://x' }, /api_key is required/],
      ['other', { api_key: '', base_url: 'http://x' }, /empty/],
      ['other', { api_key: 'k', base_url: 'ftp://x' }, /http/],
      ['other', { api_key: 'k', base_url: 'https://user:pw@x/v1' }, /credentials/],
      ['other', { api_key: 'k', base_url: 'http://x', protocol: 'grpc' }, /protocol/],
      ['other', { api_key: 'k', base_url: 'http://x', extra: 1 }, /unknown field/],
      ['other', [], /JSON object/],
    ];
    for (const [name, body, message] of bad) {
      const res = await call('PUT', `${gw()}/providers/${name}`, { body });
      expect(res.status, `${name} ${JSON.stringify(body)}`).toBe(400);
      expect(res.body.error).toMatch(message);
    }
    expect((await call('PUT', `${gw()}/providers/other`, { body: '{not json' })).status).toBe(400);
    expect((await call('PUT', `/projects/${randomUUID()}/gateway/providers/x`, { body: { api_key: 'k', base_url: 'http://x' } })).status).toBe(404);
    expect((await call('GET', '/projects/not-a-uuid/gateway/providers')).status).toBe(400);

    expect((await call('DELETE', `${gw()}/providers/openai`)).status).toBe(204);
    expect((await call('DELETE', `${gw()}/providers/anthropic`)).status).toBe(204);
    expect((await call('DELETE', `${gw()}/providers/openai`)).status).toBe(404);
    providers = (await call('GET', `${gw()}/providers`)).body.providers as any[];
    expect(providers.map((p) => p.name)).toEqual(['claude', 'local']);
    expect((await svc(['gateway', 'providers', 'rm', 'nope', '--project', 'lab'])).code).toBe(1);
  });

  it('keeps the keys in the providers Secret only: no other resource, Event or log line', async () => {
    const everything = await runOk('kubectl', ['get', 'secrets,events,configmaps,projects,sessions,sandboxes', '-A', '-o', 'json'], dev.env);
    const items = (JSON.parse(everything) as { items: { kind: string; metadata: { name: string } }[] }).items;
    const holders = items.filter((i) => [OPENAI_KEY, ANTHROPIC_KEY].some((k) => JSON.stringify(i).includes(k) || JSON.stringify(i).includes(Buffer.from(k).toString('base64'))));
    expect(holders.map((i) => `${i.kind}/${i.metadata.name}`)).toEqual(['Secret/lab-llm-providers']);
    expect(items.some((i) => i.kind === 'Event' && JSON.stringify(i).includes('GatewayProviderSet'))).toBe(true);
    expect(dev.output()).not.toContain(OPENAI_KEY);
    expect(dev.output()).not.toContain(ANTHROPIC_KEY);
  });
});

describe('a session of a project with providers', () => {
  it('gets SVC_LLM_BASE_URL, its own SVC_LLM_API_KEY and SVC_LLM_PROVIDERS; never a real key', async () => {
    sessionId = await startSession(projectId);
    const env = await engineEnv(projectId, sessionId);
    expect(env.SVC_LLM_BASE_URL).toBe(`${dev.sandboxApiUrl}/llm`);
    expect(env.SVC_LLM_PROVIDERS).toBe('claude:anthropic,local:openai');
    expect(env.SVC_LLM_API_KEY).toMatch(new RegExp(`^svcllm\\.${sessionId}\\.[A-Za-z0-9_-]{43}$`));
    sessionKey = env.SVC_LLM_API_KEY!;
    expect(JSON.stringify(env)).not.toContain(OPENAI_KEY);
    expect(JSON.stringify(env)).not.toContain(ANTHROPIC_KEY);
    const sandboxDir = path.join(dev.dataDir, 'sandboxes', 'default', sessionId);
    expect(filesContaining(sandboxDir, OPENAI_KEY)).toEqual([]);
    expect(filesContaining(sandboxDir, ANTHROPIC_KEY)).toEqual([]);
    // the Sandbox resource holds the plain variables only
    const sandbox = await runOk('kubectl', ['get', 'sandbox', sessionId, '-o', 'json'], dev.env);
    expect(sandbox).not.toContain(sessionKey);
    // svc-agent asked both providers for their models (nothing named one) through the gateway, with its key
    await usageSettled(sessionId, 2);
    const logs = (await call('GET', `${gw()}/logs?session=${sessionId}`)).body.entries as any[];
    expect(logs.map((e) => [e.provider, e.model, e.status]).sort()).toEqual([['claude', null, 200], ['local', null, 200]]);
    expect(anthropic.requests.find((r) => r.path === '/v1/models')?.headers['x-api-key']).toBe(ANTHROPIC_KEY);
  }, 90_000);

  it('a project without providers gives its sessions none of them', async () => {
    const bare = await startSession(bareProjectId);
    const env = await engineEnv(bareProjectId, bare);
    expect(Object.keys(env).filter((k) => k.startsWith('SVC_LLM_'))).toEqual([]);
    expect((await call('POST', `/projects/${bareProjectId}/sessions/${bare}/stop`)).status).toBe(200);
  }, 90_000);
});

describe('the data path', () => {
  it('relays a chat completion with the real key; the upstream never sees the session key', async () => {
    const before = model.requests.length;
    const res = await llm('local/chat/completions', sessionKey, chat({ stream: false }));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'chat.completion', choices: [{ message: { content: 'Scripted session' } }], usage: MODEL_USAGE });
    const seen = model.requests.slice(before);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.path).toBe('/v1/chat/completions');
    expect(seen[0]!.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
    expect(JSON.stringify(seen[0]!.headers)).not.toContain(sessionKey);
    expect(seen[0]!.body!.stream_options).toBeUndefined(); // not a stream: nothing added
  });

  it('streams: asks for the usage the client did not, and the client sees what it would have without', async () => {
    const direct = await fetch(`${model.url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(chat({ stream: true })) });
    const directText = await direct.text();
    const before = model.requests.length;
    const res = await llm('local/chat/completions', sessionKey, chat({ stream: true }));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const normalize = (t: string) => t.replace(/chatcmpl-\d+/g, 'ID').replace(/"created":\d+/g, '"created":0');
    expect(normalize(res.text)).toBe(normalize(directText));
    expect(res.text).not.toContain('usage');
    expect(model.requests[before]!.body!.stream_options).toEqual({ include_usage: true });
    // a client that asks gets the usage chunk as the upstream sent it
    const asked = await llm('local/chat/completions', sessionKey, chat({ stream: true, stream_options: { include_usage: true } }));
    expect(asked.text).toContain('"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}');
    expect(asked.text).toContain('"usage":null');
    // the key as x-api-key works too; GET models is relayed
    const models = await llm('local/models', null, undefined, { 'x-api-key': sessionKey });
    expect(models.status).toBe(200);
    expect(models.body.data[0].id).toBe('m1');
    // the daemon's two model listings, then these four
    await usageSettled(sessionId, 6);
    expect(await sessionUsage(sessionId)).toEqual({ key: sessionId, requests: 6, input_tokens: 30, output_tokens: 15 });
  });

  it('relays Anthropic messages with x-api-key and anthropic-version, streaming and not, and counts them', async () => {
    const before = anthropic.requests.length;
    const plain = await llm('claude/messages', null, anthropicBody(), { 'x-api-key': sessionKey, 'anthropic-version': '2023-06-01' });
    expect(plain.status).toBe(200);
    expect(plain.body).toMatchObject({ type: 'message', content: [{ type: 'text', text: 'Hello from the fake Anthropic.' }] });
    const stream = await llm('claude/messages', null, anthropicBody({ stream: true }), { 'x-api-key': sessionKey, 'anthropic-version': '2023-06-01', 'anthropic-beta': 'tools-2024-04-04' });
    expect(stream.status).toBe(200);
    expect(stream.text).toContain('event: message_start');
    expect(stream.text).toContain('event: message_stop');
    const seen = anthropic.requests.slice(before);
    expect(seen.map((r) => [r.path, r.headers['x-api-key'], r.headers['anthropic-version']])).toEqual([
      ['/v1/messages', ANTHROPIC_KEY, '2023-06-01'], ['/v1/messages', ANTHROPIC_KEY, '2023-06-01'],
    ]);
    expect(seen[1]!.headers['anthropic-beta']).toBe('tools-2024-04-04');
    expect(seen.some((r) => r.headers.authorization !== undefined || JSON.stringify(r.headers).includes(sessionKey))).toBe(false);
    const count = await llm('claude/messages/count_tokens', sessionKey, anthropicBody(), { 'anthropic-version': '2023-06-01' });
    expect(count.body).toEqual({ input_tokens: 25 });
    await usageSettled(sessionId, 9);
    // 2 × (25 input + 4 cache read) and 2 × 9 output on top of the OpenAI ones; counting tokens costs none
    expect(await sessionUsage(sessionId)).toEqual({ key: sessionId, requests: 9, input_tokens: 30 + 58, output_tokens: 15 + 18 });
  });

  it('401 without, with a wrong or a foreign key; 404 unknown provider or path; 405 wrong method', async () => {
    const forged = `svcllm.${sessionId}.${'A'.repeat(43)}`;
    const sandboxToken = (await engineEnv(projectId, sessionId)).SVC_SANDBOX_TOKEN!;
    for (const key of [null, forged, dev.token, sandboxToken, 'sk-anything']) {
      const res = await llm('local/chat/completions', key, chat());
      expect(res.status, String(key)).toBe(401);
      expect(res.body.error).toEqual(expect.any(String));
    }
    expect((await llm('nope/chat/completions', sessionKey, chat())).status).toBe(404);
    expect((await llm('local/files', sessionKey, {})).status).toBe(404);
    expect((await llm('local/fine_tuning/jobs', sessionKey, {})).status).toBe(404);
    // dot segments (fetch would normalize them away: sent as written)
    expect(await rawStatus('POST', '/v1/llm/local/../claude/messages', sessionKey)).toBe(400);
    expect((await llm('local/chat%2fcompletions', sessionKey, chat())).status).toBe(400);
    expect((await llm('local/chat/completions', sessionKey)).status).toBe(405);
    expect((await llm('claude/chat/completions', sessionKey, chat())).status).toBe(404);
  });

  it('attacks: another project\'s provider, a body over the limit, a redirect to elsewhere', async () => {
    // a provider of another project is unknown to this session's key
    expect((await call('PUT', `${gw(bareProjectId)}/providers/elsewhere`, { body: { api_key: 'sk-bare', base_url: model.url } })).status).toBe(204);
    await new Promise((r) => setTimeout(r, 300));
    expect((await llm('elsewhere/chat/completions', sessionKey, chat())).status).toBe(404);
    // over SVC_LLM_MAX_REQUEST_BYTES (1 MiB here): 413, nothing sent upstream
    const before = model.requests.length;
    const big = await llm('local/chat/completions', sessionKey, chat({ padding: 'x'.repeat(2 * 1024 * 1024) }));
    expect(big.status).toBe(413);
    expect(model.requests.length).toBe(before);
    // an upstream's redirect is answered to the client, never followed with the key
    const stolen: http.IncomingHttpHeaders[] = [];
    const thief = http.createServer((req, res) => { stolen.push(req.headers); res.end('{}'); });
    await new Promise<void>((r) => thief.listen(0, '127.0.0.1', r));
    const redirector = http.createServer((_req, res) => { res.writeHead(307, { location: `http://127.0.0.1:${(thief.address() as { port: number }).port}/steal` }); res.end(); });
    await new Promise<void>((r) => redirector.listen(0, '127.0.0.1', r));
    try {
      expect((await call('PUT', `${gw()}/providers/redirects`, { body: { api_key: 'sk-redirected', base_url: `http://127.0.0.1:${(redirector.address() as { port: number }).port}/v1` } })).status).toBe(204);
      const answer = await waitFor('the provider cached', async () => {
        const r = await llm('redirects/chat/completions', sessionKey, chat(), {});
        return r.status === 404 ? undefined : r;
      }, 10_000);
      expect(answer.status).toBe(307);
      expect(stolen).toEqual([]);
    } finally {
      thief.close();
      redirector.close();
      await call('DELETE', `${gw()}/providers/redirects`);
    }
  });

  it('streams without buffering: the first event arrives while the upstream still writes; a client that leaves ends the upstream request', async () => {
    let release: () => void = () => undefined;
    let upstreamClosed = false;
    const slow = http.createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify({ id: 'slow', choices: [{ index: 0, delta: { content: 'first' } }] })}\n\n`);
      res.on('close', () => { upstreamClosed = true; });
      release = () => res.end('data: [DONE]\n\n');
    });
    await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
    try {
      expect((await call('PUT', `${gw()}/providers/slow`, { body: { api_key: 'sk-slow', base_url: `http://127.0.0.1:${(slow.address() as { port: number }).port}/v1` } })).status).toBe(204);
      const abort = new AbortController();
      const res = await waitFor('the provider cached', async () => {
        const r = await fetch(`${dev.apiUrl}/llm/slow/chat/completions`, {
          method: 'POST', signal: abort.signal,
          headers: { authorization: `Bearer ${sessionKey}`, 'content-type': 'application/json' }, body: JSON.stringify(chat({ stream: true, stream_options: { include_usage: true } })),
        });
        if (r.status === 404) { await r.text(); return undefined; }
        return r;
      }, 10_000);
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      const { value } = await reader.read();
      expect(Buffer.from(value!).toString()).toContain('"content":"first"'); // the upstream has not ended its answer
      abort.abort();
      await waitFor('the upstream request ended', async () => upstreamClosed, 5_000);
      await waitFor('the cut request recorded', async () => ((await call('GET', `${gw()}/logs?limit=5`)).body.entries as any[]).some((e) => e.provider === 'slow' && e.status === 200), 10_000);
    } finally {
      release();
      slow.close();
      await call('DELETE', `${gw()}/providers/slow`);
    }
  });

  it('a base_url that stops at the host: the client names the version, the same endpoints only', async () => {
    expect(model.url).toMatch(/\/v1$/);
    expect((await call('PUT', `${gw()}/providers/rooted`, { body: { api_key: OPENAI_KEY, base_url: model.url.replace(/\/v1$/, '') } })).status).toBe(204);
    const before = model.requests.length;
    const res = await llm('rooted/v1/chat/completions', sessionKey, chat({ stream: false, model: 'm-rooted' }));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'chat.completion', usage: MODEL_USAGE });
    const seen = model.requests.slice(before);
    expect(seen.map((r) => r.path)).toEqual(['/v1/chat/completions']);
    expect(seen[0]!.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
    expect((await llm('rooted/v1/files', sessionKey, {})).status).toBe(404);
    expect(model.requests.length).toBe(before + 1);
    expect((await call('DELETE', `${gw()}/providers/rooted`)).status).toBe(204);
    // counted like any other (and written before the next test reads its baseline)
    await waitFor('the request counted', async () => ((await call('GET', `${gw()}/usage?group_by=model`)).body.groups as any[])
      .find((g) => g.key === 'm-rooted')?.requests === 1);
  });

  it('an upstream that cannot be reached is 502', async () => {
    expect((await call('PUT', `${gw()}/providers/gone`, { body: { api_key: 'k', base_url: 'http://127.0.0.1:9/v1' } })).status).toBe(204);
    await waitFor('the provider cached', async () => (await llm('gone/chat/completions', sessionKey, chat())).status === 502, 10_000);
    expect((await call('DELETE', `${gw()}/providers/gone`)).status).toBe(204);
  });
});

describe('usage and logs', () => {
  it('groups by session, trigger, model and day; since counts only later requests', async () => {
    // what the last requests cost is written within a moment (the API gathers writes for 200 ms)
    let last = '';
    await waitFor('the usage settled', async () => {
      const now = JSON.stringify((await call('GET', `${gw()}/usage?group_by=session`)).body.total);
      const same = now === last;
      last = now;
      if (!same) await new Promise((r) => setTimeout(r, 500));
      return same;
    }, 15_000);
    const bySession = (await call('GET', `${gw()}/usage?group_by=session`)).body;
    expect(bySession.total.requests).toBeGreaterThanOrEqual(7);
    expect(bySession.groups.map((g: any) => g.key)).toContain(sessionId);
    const byModel = (await call('GET', `${gw()}/usage?group_by=model`)).body;
    expect(byModel.groups.find((g: any) => g.key === 'claude-fake-1')).toMatchObject({ input_tokens: 58, output_tokens: 18 });
    expect(byModel.groups.find((g: any) => g.key === 'm1')).toMatchObject({ input_tokens: 30, output_tokens: 15 });
    const byTrigger = (await call('GET', `${gw()}/usage?group_by=trigger`)).body;
    expect(byTrigger.groups[0].key).toBeNull(); // a session started by a person
    const byDay = (await call('GET', `${gw()}/usage?group_by=day`)).body;
    expect(byDay.groups.map((g: any) => g.key)).toContain(new Date().toISOString().slice(0, 10));
    const later = (await call('GET', `${gw()}/usage?group_by=day&since=${new Date(Date.now() + 60_000).toISOString()}`)).body;
    expect(later).toEqual({ total: { requests: 0, input_tokens: 0, output_tokens: 0 }, groups: [] });
    expect((await call('GET', `${gw()}/usage?group_by=week`)).status).toBe(400);
    expect((await call('GET', `${gw()}/usage?since=yesterday`)).status).toBe(400);

    const cli = await svc(['gateway', 'usage', '--group-by', 'model', '--since', '1d', '--project', 'lab']);
    expect(cli.code).toBe(0);
    expect(cli.stdout).toMatch(/claude-fake-1\s+3\s+58\s+18\s+76/);
    expect(JSON.parse((await svc(['gateway', 'usage', '--group-by', 'session', '--project', 'lab', '--json'])).stdout).total.requests).toBe(bySession.total.requests);
  });

  it('logs: newest first, per session, limited; never prompt or completion text', async () => {
    const logs = (await call('GET', `${gw()}/logs?session=${sessionId}&limit=3`)).body;
    expect(logs.entries).toHaveLength(3);
    expect(logs.entries[0]).toEqual({
      at: expect.any(String), session_id: sessionId, trigger: null, provider: 'gone', model: 'm1',
      status: 502, input_tokens: 0, output_tokens: 0, duration_ms: expect.any(Number),
    }); // the unreachable provider, last
    expect(Date.parse(logs.entries[0].at)).toBeGreaterThanOrEqual(Date.parse(logs.entries[1].at));
    const all = await call('GET', `${gw()}/logs?limit=1000`);
    expect(all.text).not.toContain('Hello from the fake Anthropic');
    expect(all.text).not.toContain(PROMPT_TEXT);
    expect(all.body.entries.some((e: any) => e.status === 502)).toBe(true);
    expect((await call('GET', `${gw()}/logs?limit=0`)).status).toBe(400);
    expect((await call('GET', `${gw()}/logs?session=nope`)).status).toBe(400);
    const cli = await svc(['gateway', 'logs', '--session', sessionId, '--limit', '2', '--project', 'lab']);
    expect(cli.stdout.split('\n').filter((l) => l.includes(sessionId))).toHaveLength(2);
  });

  it('Prometheus: tokens by direction, requests by status, durations', async () => {
    const metrics = await (await fetch(dev.apiUrl.replace(/\/v1$/, '/metrics'))).text();
    expect(metrics).toContain('svc_llm_tokens_total{project="lab",provider="claude",model="claude-fake-1",direction="input"} 58');
    expect(metrics).toMatch(/svc_llm_requests_total\{project="lab",provider="local",status="200"\} \d+/);
    expect(metrics).toMatch(/svc_llm_request_duration_seconds_count\{project="lab",provider="claude"\} \d+/);
  });

  it('a deleted project\'s series leave /metrics; the others stay', async () => {
    const metricsText = async () => (await fetch(dev.apiUrl.replace(/\/v1$/, '/metrics'))).text();
    const created = JSON.parse(await runOk(process.execPath, [SVC, 'projects', 'create', 'brief', '--repo', path.join(dev.dataDir, 'repo'), '--json'], dev.env));
    const briefId = (created.project ?? created).id as string;
    expect((await svc(['gateway', 'providers', 'set', 'local', '--base-url', model.url, '--project', 'brief'], `${OPENAI_KEY}\n`)).code).toBe(0);
    // svc-agent asks the provider for its models through the gateway when it boots
    const brief = await startSession(briefId);
    await waitFor('the project\'s series', async () => (await metricsText()).includes('svc_llm_requests_total{project="brief",provider="local",status="200"}'), 15_000);
    expect((await call('POST', `/projects/${briefId}/sessions/${brief}/stop`)).status).toBe(200);
    await runOk('kubectl', ['delete', 'project', 'brief', '--wait=false'], dev.env);
    await waitFor('the series gone', async () => !(await metricsText()).includes('project="brief"'), 60_000);
    expect(await metricsText()).toContain('svc_llm_requests_total{project="lab",provider="local",status="200"}');
  }, 120_000);
});

describe('budgets', () => {
  it('shows the budget and the period\'s use; refuses bad budgets', async () => {
    const shown = await call('GET', `${gw()}/budget`);
    expect(shown.body).toEqual({ budget: { period: 'month', max_tokens: null, max_tokens_per_session: null }, used: { period_tokens: expect.any(Number) } });
    expect(shown.body.used.period_tokens).toBeGreaterThanOrEqual(30 + 15 + 58 + 18);
    for (const body of [{ period: 'week' }, { period: 'day', max_tokens: -5 }, { period: 'day', max_tokens: 'x' }, { period: 'day', nope: 1 }, {}]) {
      expect((await call('PUT', `${gw()}/budget`, { body })).status, JSON.stringify(body)).toBe(400);
    }
  });

  it('a project period budget: 429 BUDGET_EXCEEDED before the provider, one Warning Event on the Session', async () => {
    const used = (await call('GET', `${gw()}/budget`)).body.used.period_tokens as number;
    const set = await call('PUT', `${gw()}/budget`, { body: { period: 'day', max_tokens: used + 1, max_tokens_per_session: null } });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({ budget: { period: 'day', max_tokens: used + 1, max_tokens_per_session: null }, used: { period_tokens: used } });
    // under the budget: this one starts, and goes past it
    expect((await llm('local/chat/completions', sessionKey, chat({ stream: false }))).status).toBe(200);
    const before = model.requests.length;
    const refused = await waitFor('the refusal', async () => {
      const r = await llm('local/chat/completions', sessionKey, chat({ stream: true }));
      return r.status === 429 ? r : undefined;
    }, 10_000);
    expect(refused.body).toEqual({ error: expect.stringMatching(/day \(UTC\) budget of \d+ tokens is used up/), code: 'BUDGET_EXCEEDED' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await llm('claude/messages', sessionKey, anthropicBody(), { 'anthropic-version': '2023-06-01' })).status).toBe(429);
    expect(model.requests.length).toBe(before); // nothing reached the provider
    const events = await waitFor('the BudgetExceeded Event', async () => {
      const list = JSON.parse(await runOk('kubectl', ['get', 'events', '--field-selector', `involvedObject.name=${sessionId},reason=BudgetExceeded`, '-o', 'json'], dev.env)).items as any[];
      return list.length > 0 ? list : undefined;
    });
    expect(events).toHaveLength(1); // three refusals, one Event
    expect(events[0]).toMatchObject({ type: 'Warning', involvedObject: { kind: 'Session', name: sessionId } });
    const cli = await svc(['gateway', 'budget', '--project', 'lab']);
    expect(cli.stdout).toMatch(/Project limit:\s+\d+ tokens/);
  });

  it('a per-session budget stops that session only', async () => {
    const mine = (await sessionUsage(sessionId)) as { input_tokens: number; output_tokens: number };
    const perSession = mine.input_tokens + mine.output_tokens;
    const set = await svc(['gateway', 'budget', '--max-tokens', 'none', '--max-tokens-per-session', String(perSession), '--project', 'lab', '--json']);
    expect(set.code).toBe(0);
    expect(JSON.parse(set.stdout).budget).toEqual({ period: 'day', max_tokens: null, max_tokens_per_session: perSession });
    // (what the last requests cost may still be on its way to the session's counter)
    const refused = await waitFor('the session refused', async () => {
      const r = await llm('local/chat/completions', sessionKey, chat({ stream: false }));
      return r.status === 429 ? r : undefined;
    }, 10_000);
    expect(refused.body.error).toMatch(/this session's budget/);
    const other = await startSession(projectId);
    const otherKey = (await engineEnv(projectId, other)).SVC_LLM_API_KEY!;
    expect(otherKey).not.toBe(sessionKey);
    expect((await llm('local/chat/completions', otherKey, chat({ stream: false }))).status).toBe(200);
    expect((await call('POST', `/projects/${projectId}/sessions/${other}/stop`)).status).toBe(200);
    // lifted: the first session may go on
    expect((await call('PUT', `${gw()}/budget`, { body: { period: 'month', max_tokens: null, max_tokens_per_session: null } })).status).toBe(200);
    expect((await llm('local/chat/completions', sessionKey, chat({ stream: false }))).status).toBe(200);
  }, 90_000);
});

describe('access', () => {
  it('403 for each missing capability, write access or project; providers listed with read access', async () => {
    const all = ['project.gateway.keys.manage', 'project.gateway.spend.read', 'project.gateway.logs.read', 'project.gateway.budget.set'];
    const routes: [string, string, unknown, string][] = [
      ['PUT', `${gw()}/providers/x`, { api_key: 'k', base_url: 'http://x' }, 'project.gateway.keys.manage'],
      ['DELETE', `${gw()}/providers/x`, undefined, 'project.gateway.keys.manage'],
      ['GET', `${gw()}/usage`, undefined, 'project.gateway.spend.read'],
      ['GET', `${gw()}/budget`, undefined, 'project.gateway.spend.read'],
      ['GET', `${gw()}/logs`, undefined, 'project.gateway.logs.read'],
      ['PUT', `${gw()}/budget`, { period: 'day' }, 'project.gateway.budget.set'],
    ];
    const reader = await mint({ access: 'read', capabilities: all });
    const otherProject = await mint({ access: 'write', projectUid: bareProjectId, capabilities: ['*'] });
    for (const [method, url, body, capability] of routes) {
      const without = await mint({ access: 'write', capabilities: all.filter((c) => c !== capability) });
      const res = await call(method, url, { body, token: without });
      expect(res.status, `${method} ${url} without ${capability}`).toBe(403);
      expect(res.body.error).toContain(capability);
      expect((await call(method, url, { body, token: otherProject })).status, `${method} ${url} another project's token`).toBe(403);
      expect((await call(method, url, { body, token: '' })).status, `${method} ${url} no token`).toBe(401);
      expect((await call(method, url, { body, token: sessionKey })).status, `${method} ${url} a session key`).toBe(401);
      if (method !== 'GET') expect((await call(method, url, { body, token: reader })).status, `${method} ${url} read-only`).toBe(403);
      else expect((await call(method, url, { token: reader })).status, `${method} ${url} read with the capability`).toBe(200);
    }
    // the CLI with a token that may only set budgets: every flag given, no read of the budget first
    const setter = await mint({ access: 'write', capabilities: ['project.gateway.budget.set'] });
    const asSetter = (args: string[]) => run(process.execPath, [SVC, ...args], { ...dev.env, SVC_CLI_TOKEN: setter });
    const set = await asSetter(['gateway', 'budget', '--period', 'month', '--max-tokens', 'none', '--max-tokens-per-session', 'none', '--project', 'lab', '--json']);
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout).budget).toEqual({ period: 'month', max_tokens: null, max_tokens_per_session: null });
    const partial = await asSetter(['gateway', 'budget', '--max-tokens', '5', '--project', 'lab']);
    expect(partial.code).not.toBe(0); // the others are read first, which needs project.gateway.spend.read
    expect(partial.stderr).toContain('project.gateway.spend.read');
    const plainReader = await mint({ access: 'read', capabilities: [] });
    expect((await call('GET', `${gw()}/providers`, { token: plainReader })).status).toBe(200);
    expect((await call('PUT', `${gw()}/providers/x`, { body: { api_key: 'k', base_url: 'http://x' }, token: plainReader })).status).toBe(403);
  }, 60_000);
});

describe('two API replicas', () => {
  it('count every request once and share the budget', async () => {
    // a second API process on the same cluster, as a Deployment with two replicas would run it
    const second = spawn(process.execPath, [path.join(REPO_ROOT, 'dist/src/main/api.js')], {
      env: {
        PATH: process.env.PATH, KUBECONFIG: dev.kubeconfig, SVC_NAMESPACE: 'default', SVC_PROJECT_NAMESPACE: 'default',
        SVC_HTTP_HOST: '127.0.0.1', SVC_HTTP_PORT: '0', SVC_ALLOW_LOCAL_REPOS: '1', SVC_MIRROR_DIR: path.join(dev.dataDir, 'second-api-mirrors'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      let output = '';
      const port = await new Promise<string>((resolve, reject) => {
        const onData = (c: Buffer) => { output += c.toString(); const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(output); if (m) resolve(m[1]!); };
        second.stdout!.on('data', onData);
        second.stderr!.on('data', onData);
        second.once('exit', (code) => reject(new Error(`the second API exited ${code}: ${output}`)));
      });
      const other = `http://127.0.0.1:${port}/v1`;
      await waitFor('the second API ready', async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).ok);
      const before = await sessionUsage(sessionId);
      const at = (base: string) => call('POST', `${base}/llm/local/chat/completions`, { body: chat({ stream: true }), token: '', headers: { authorization: `Bearer ${sessionKey}` } });
      const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => at(i % 2 ? other : dev.apiUrl)));
      expect(answers.map((a) => a.status)).toEqual(Array(30).fill(200));
      const after = await waitFor('30 more requests recorded', async () => {
        const now = await sessionUsage(sessionId);
        return now.requests >= before.requests + 30 ? now : undefined;
      }, 15_000);
      expect(after).toEqual({ ...before, requests: before.requests + 30, input_tokens: before.input_tokens + 300, output_tokens: before.output_tokens + 150 });

      // a budget set through one replica holds at the other
      const used = (await call('GET', `${gw()}/budget`)).body.used.period_tokens as number;
      expect((await call('PUT', `${gw()}/budget`, { body: { period: 'month', max_tokens: used, max_tokens_per_session: null } })).status).toBe(200);
      const refused = await waitFor('the other replica refusing', async () => {
        const r = await at(other);
        return r.status === 429 ? r : undefined;
      }, 10_000);
      expect(refused.body.code).toBe('BUDGET_EXCEEDED');
      expect((await at(dev.apiUrl)).status).toBe(429);
      expect((await call('PUT', `${gw()}/budget`, { body: { period: 'month', max_tokens: null, max_tokens_per_session: null } })).status).toBe(200);
    } finally {
      const exited = new Promise((r) => second.once('exit', r));
      second.kill('SIGTERM');
      await exited;
    }
  }, 60_000);
});

describe('lifecycle', () => {
  it('the counters survive a restart of svc dev; a stopped session\'s key is dead at once', async () => {
    const usage = (await call('GET', `${gw()}/usage?group_by=session`)).body;
    await call('PUT', `${gw()}/budget`, { body: { period: 'total', max_tokens: 1_000_000, max_tokens_per_session: null } });
    await dev.stop();
    dev = await startDev({ dataDir: dev.dataDir, args: devArgs, extraEnv: { SVC_LLM_MAX_REQUEST_BYTES: String(1024 * 1024) } });
    expect((await call('GET', `${gw()}/usage?group_by=session`)).body).toEqual(usage);
    expect((await call('GET', `${gw()}/budget`)).body.budget).toEqual({ period: 'total', max_tokens: 1_000_000, max_tokens_per_session: null });
    // the restarted operator adopted the sandbox (or started it again): its key works on the new API
    await waitFor('the key accepted after the restart', async () => (await llm('local/chat/completions', sessionKey, chat({ stream: false }))).status === 200, 60_000);

    expect((await call('POST', `/projects/${projectId}/sessions/${sessionId}/stop`)).status).toBe(200);
    const dead = await waitFor('the key refused', async () => {
      const r = await llm('local/chat/completions', sessionKey, chat({ stream: false }));
      return r.status === 401 ? r : undefined;
    }, 5_000);
    expect(dead.body.error).toMatch(/stopped or failed/);
  }, 180_000);
});
