import { describe, expect, it } from 'vitest';
import { renderTemplate } from './template.js';
import { cronVariables, manualVariables, webhookVariables } from './variables.js';

const trigger = { slug: 'hook', type: 'webhook' as const };
const at = new Date('2030-05-01T10:00:00Z');

describe('template variables per source', () => {
  it('cron: trigger.* and cron.*, no top-level fired_at', () => {
    const vars = cronVariables({ slug: 'nightly', type: 'cron' }, { schedule: '0 0 3 * * *', timezone: 'Europe/Berlin', firedAt: at, lastFiredAt: new Date('2030-04-30T10:00:00Z') });
    expect(vars).toEqual({
      trigger: { slug: 'nightly', type: 'cron', kind: 'git' },
      cron: { schedule: '0 0 3 * * *', timezone: 'Europe/Berlin', fired_at: '2030-05-01T10:00:00.000Z', last_fired_at: '2030-04-30T10:00:00.000Z' },
    });
    expect(renderTemplate('[{{ fired_at }}][{{ cron.last_fired_at }}]', cronVariables({ slug: 'n', type: 'cron' }, { schedule: 's', timezone: 'UTC', firedAt: at }))).toBe('[][]');
  });

  it('webhook: fired_at, the parsed body and three headers', () => {
    const vars = webhookVariables(trigger, {
      rawBody: Buffer.from('{"ref":"main","n":[1]}'),
      headers: { 'content-type': 'application/json; charset=utf-8', 'user-agent': 'GitHub-Hookshot/1', 'x-forwarded-for': '10.0.0.1', 'x-other': 'no' },
      firedAt: at,
    });
    expect(vars).toEqual({
      trigger: { slug: 'hook', type: 'webhook', kind: 'git' },
      fired_at: '2030-05-01T10:00:00.000Z',
      body: { ref: 'main', n: [1] },
      headers: { content_type: 'application/json; charset=utf-8', user_agent: 'GitHub-Hookshot/1', forwarded_for: '10.0.0.1' },
    });
  });

  it('webhook: a body nested deeper than 64 levels is body.raw, so the fire can be serialized and recorded', () => {
    const deep = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;
    const vars = webhookVariables(trigger, { rawBody: Buffer.from(deep), headers: {}, firedAt: at });
    expect(vars.body).toEqual({ raw: deep });
    expect(JSON.stringify(vars).length).toBeGreaterThan(400_000); // it overflowed the stack here
    const edge = `${'{"a":'.repeat(63)}1${'}'.repeat(63)}`;
    expect(webhookVariables(trigger, { rawBody: Buffer.from(`[${edge}]`), headers: {}, firedAt: at }).body).toEqual(JSON.parse(`[${edge}]`));
    expect(webhookVariables(trigger, { rawBody: Buffer.from(`[[${edge}]]`), headers: {}, firedAt: at }).body).toEqual({ raw: `[[${edge}]]` });
  });

  it.each([
    ['not JSON', 'a=1&b=2'],
    ['empty', ''],
    ['truncated JSON', '{"a":'],
  ])('webhook: an unparseable body (%s) is body.raw', (_name, text) => {
    const vars = webhookVariables(trigger, { rawBody: Buffer.from(text), headers: {}, firedAt: at });
    expect(vars.body).toEqual({ raw: text });
    expect(vars.headers).toEqual({ content_type: '', user_agent: '', forwarded_for: '' });
  });

  it("webhook: GitHub's form delivery (payload=<JSON>) is the payload's fields, with body.raw beside them", () => {
    const payload = { ref: 'refs/heads/main', pusher: { name: 'ada' }, raw: 'a field of the payload' };
    const form = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
    const formType = { 'content-type': 'application/x-www-form-urlencoded' };
    const vars = webhookVariables(trigger, { rawBody: Buffer.from(form), headers: formType, firedAt: at });
    expect(vars.body).toEqual({ ref: 'refs/heads/main', pusher: { name: 'ada' }, raw: form });
    expect(renderTemplate('{{ body.ref }} by {{ body.pusher.name }}', vars)).toBe('refs/heads/main by ada');
    // anything else stays body.raw: another field, a payload that is not an object, another content type
    for (const [body, headers] of [
      [`${form}&other=1`, formType], ['payload=%5B1%5D', formType], ['payload=nope', formType], [form, { 'content-type': 'text/plain' }], [form, {}],
    ] as const) {
      expect(webhookVariables(trigger, { rawBody: Buffer.from(body), headers, firedAt: at }).body, body).toEqual({ raw: body });
    }
  });

  it('manual: fired_at, source, actor and message', () => {
    expect(manualVariables(trigger, { actor: 'u-1', message: { text: 'go', source: 'cli' }, firedAt: at })).toEqual({
      trigger: { slug: 'hook', type: 'webhook', kind: 'git' },
      fired_at: '2030-05-01T10:00:00.000Z', source: 'manual', actor: 'u-1', message: { text: 'go', source: 'cli' },
    });
    expect(manualVariables(trigger, { actor: 'u-1', firedAt: at }).message).toEqual({ text: '', source: '' });
  });
});
