import { describe, expect, it } from 'vitest';
import type { ApiError } from '../errors.js';
import { chooseAgent, parsePort, parsePrompt, parseStart, parseStatusFilter } from './validate.js';

const status = (fn: () => unknown) => {
  try { fn(); } catch (error) { return (error as ApiError).status; }
  return 200;
};

describe('session requests', () => {
  it.each([
    [undefined, {}],
    [{}, {}],
    [{ agent: 'coder', base_ref: 'release', prompt: 'fix it', model: 'openai/gpt-4o' }, { agent: 'coder', baseRef: 'release', prompt: 'fix it', model: 'openai/gpt-4o' }],
    [{ base_ref: 'refs/heads/dev' }, { baseRef: 'dev' }],
    [{ prompt: '   ' }, {}],
  ])('start %j', (body, expected) => {
    expect(parseStart(body)).toEqual(expected);
  });

  it.each([
    [[]], ['text'], [{ nope: 1 }], [{ agent: 'Has Space' }], [{ base_ref: 'a..b' }], [{ model: 'no-slash' }], [{ prompt: 3 }], [{ prompt: 'a\0b' }],
  ])('start rejects %j with 400', (body) => {
    expect(status(() => parseStart(body))).toBe(400);
  });

  it('prompt needs text', () => {
    expect(parsePrompt({ text: 'more' })).toBe('more');
    for (const body of [undefined, {}, { text: '' }, { text: 1 }, { text: 'x', other: 1 }]) expect(status(() => parsePrompt(body))).toBe(400);
  });

  it('status filter and ports', () => {
    expect(parseStatusFilter(undefined)).toBeUndefined();
    expect(parseStatusFilter('all')).toBeUndefined();
    expect(parseStatusFilter('running')).toBe('running');
    expect(status(() => parseStatusFilter('bogus'))).toBe(400);
    expect(() => parseStatusFilter('bogus')).toThrow('status must be one of queued, branching, provisioning, running, stopped, failed, completed, all (got "bogus")');
    expect(parsePort('3000')).toBe(3000);
    for (const p of ['0', '70000', 'x', '080', '+80', '8e1']) expect(status(() => parsePort(p))).toBe(400);
  });
});

describe('agent of a new session', () => {
  const v2 = { svc_version: 2, default_agent: 'coder', agents: { coder: {}, reviewer: {} } };
  it.each([
    ['v2, none asked: default_agent', undefined, v2, 'coder'],
    ['v2, a declared one', 'reviewer', v2, 'reviewer'],
    ['v1: as asked', 'whatever', { svc_version: 1, agents: [] }, 'whatever'],
    ['no manifest: default', undefined, null, 'default'],
  ] as const)('%s', (_name, requested, manifest, agent) => {
    expect(chooseAgent(requested, manifest, 'main')).toBe(agent);
  });

  it('an unknown agent in a version 2 manifest is 400, naming the declared ones', () => {
    expect(() => chooseAgent('ghost', v2, 'main')).toThrow(/unknown agent "ghost".*coder, reviewer/);
    expect(status(() => chooseAgent('ghost', v2, 'main'))).toBe(400);
  });
});
