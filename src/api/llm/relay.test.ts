import { describe, expect, it } from 'vitest';
import type { Session } from '../../resources/index.js';
import { prepareBody, routeProblem, llmKeyLive } from './relay.js';
import { splitTarget } from './routes.js';

describe('what each protocol relays', () => {
  it.each([
    ['openai', 'POST', 'chat/completions', null],
    ['openai', 'POST', 'responses', null],
    ['openai', 'POST', 'embeddings', null],
    ['openai', 'GET', 'models', null],
    ['openai', 'GET', 'models/ft:gpt-4o:org:x', null],
    ['openai', 'GET', 'chat/completions', 405],
    ['openai', 'POST', 'files', 404],
    ['openai', 'POST', 'batches', 404],
    ['openai', 'POST', 'messages', 404],
    ['anthropic', 'POST', 'messages', null],
    ['anthropic', 'POST', 'messages/count_tokens', null],
    ['anthropic', 'POST', 'messages/batches', 404],
    ['anthropic', 'POST', 'chat/completions', 404],
    // a base_url that stops at the host: the client names the version
    ['openai', 'POST', 'v1/chat/completions', null],
    ['openai', 'GET', 'v1/models', null],
    ['openai', 'POST', 'v1/files', 404],
    ['openai', 'POST', 'v2/chat/completions', 404],
    ['openai', 'POST', 'v1/v1/chat/completions', 404],
    ['anthropic', 'POST', 'v1/messages', null],
    ['anthropic', 'POST', 'v1/messages/batches', 404],
  ] as const)('%s %s %s', (protocol, method, path, status) => {
    expect(routeProblem(protocol, method, path)?.status ?? null).toBe(status);
  });
});

describe('splitTarget', () => {
  it('splits provider, upstream path and query; refuses dot and encoded-slash segments', () => {
    expect(splitTarget('/openai/chat/completions?x=1')).toEqual({ provider: 'openai', path: 'chat/completions', query: '?x=1' });
    expect(() => splitTarget('/openai')).toThrow(/provider/);
    for (const bad of ['/openai/../x', '/openai/./x', '/openai/a%2Fb', '/openai//x', '/openai/%2e%2e/x']) expect(() => splitTarget(bad)).toThrow();
  });
});

describe('prepareBody', () => {
  const body = (obj: unknown) => Buffer.from(JSON.stringify(obj));

  it('asks an OpenAI stream for its usage when the client did not, keeping its other stream options', () => {
    for (const path of ['chat/completions', 'v1/chat/completions']) {
      const prepared = prepareBody('openai', path, body({ model: 'm', stream: true, stream_options: { other: 1 } }), 'application/json');
      expect(prepared.strip).toBe(true);
      expect(prepared.model).toBe('m');
      expect(JSON.parse(prepared.bytes.toString())).toEqual({ model: 'm', stream: true, stream_options: { other: 1, include_usage: true } });
    }
  });

  it('sends everything else byte for byte', () => {
    for (const [protocol, path, obj] of [
      ['openai', 'chat/completions', { model: 'm', stream: true, stream_options: { include_usage: true } }],
      ['openai', 'chat/completions', { model: 'm' }],
      ['openai', 'responses', { model: 'm', stream: true }],
      ['anthropic', 'messages', { model: 'c', stream: true }],
    ] as const) {
      const raw = Buffer.from(` ${JSON.stringify(obj)}\n`);
      const prepared = prepareBody(protocol, path, raw, 'application/json');
      expect(prepared.bytes).toBe(raw);
      expect(prepared.strip).toBe(false);
    }
    expect(prepareBody('openai', 'chat/completions', Buffer.from('{broken'), 'application/json')).toEqual({ bytes: Buffer.from('{broken'), model: null, strip: false });
  });
});

describe('llmKeyLive', () => {
  const session = (spec: Partial<Session['spec']>, status?: string, deleting = false): Session => ({
    apiVersion: 'svc.dev/v1alpha1', kind: 'Session',
    metadata: { name: 's', ...(deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
    spec: { projectRef: { name: 'p' }, agent: 'a', baseRef: 'main', desiredState: 'running', ...spec },
    status: status ? { status: status as never } : undefined,
  });
  it('is live while the session runs or starts, dead once it is stopped, failed or deleted', () => {
    expect(llmKeyLive(session({}))).toBe(true);
    expect(llmKeyLive(session({}, 'provisioning'))).toBe(true);
    expect(llmKeyLive(session({}, 'running'))).toBe(true);
    expect(llmKeyLive(session({ desiredState: 'stopped' }, 'running'))).toBe(false);
    expect(llmKeyLive(session({}, 'stopped'))).toBe(false);
    expect(llmKeyLive(session({}, 'failed'))).toBe(false);
    expect(llmKeyLive(session({}, 'running', true))).toBe(false);
  });
});
