import { describe, expect, it } from 'vitest';
import type { NormalizedTrigger } from '../manifest/index.js';
import { promptTagWarnings, promptVariableWarnings } from './prompt-variables.js';

const trigger = (slug: string, type: NormalizedTrigger['type'], prompt: string): NormalizedTrigger =>
  ({ slug, type, name: slug, prompt, agent: 'build', session_mode: 'fresh', enabled: true, timezone: 'UTC' });

const WEBHOOK_HAS = 'it has trigger.slug, trigger.type, trigger.kind, fired_at, body.*, headers.content_type, headers.user_agent, headers.forwarded_for (fired by hand also source, actor, message.text, message.source)';

describe('promptVariableWarnings', () => {
  it.each([
    ['a webhook\'s body, any path below it, its headers and the trigger', 'webhook', 'Push to {{ body.ref }} by {{body.pusher.name}} ({{ headers.user_agent }}, {{ trigger.slug }}, {{ body }}, {{ trigger }})'],
    ['a cron fire\'s variables', 'cron', '{{ cron.schedule }} {{ cron.timezone }} {{ cron.fired_at }} {{ cron.last_fired_at }} {{{ trigger.kind }}}'],
    ['a manual fire\'s, in any trigger (fired by hand)', 'cron', 'Nightly review: {{ message.text }} from {{ actor }} ({{ source }}, {{ message.source }}, {{ fired_at }})'],
    ['no tags', 'webhook', 'just text, {single} braces'],
  ] as const)('none for %s', (_name, type, prompt) => {
    expect(promptVariableWarnings([trigger('t', type, prompt)], { triggers: [{ slug: 't' }] })).toEqual([]);
  });

  it('one per unknown path, once each, at the trigger\'s entry, saying what its source has', () => {
    const triggers = [trigger('nightly', 'cron', '{{ cron.schedule }}'), trigger('on-push', 'webhook', 'Push to {{ payload.ref }} by {{ payload.pusher.name }}; again {{payload.ref}}; {{ headers.authorization }}')];
    expect(promptVariableWarnings(triggers, { triggers: [{ slug: 'nightly' }, { slug: 'on-push' }] })).toEqual([
      { path: '/triggers/1/prompt', message: `{{ payload.ref }} names no variable of a webhook fire and renders empty; ${WEBHOOK_HAS}` },
      { path: '/triggers/1/prompt', message: `{{ payload.pusher.name }} names no variable of a webhook fire and renders empty; ${WEBHOOK_HAS}` },
      { path: '/triggers/1/prompt', message: `{{ headers.authorization }} names no variable of a webhook fire and renders empty; ${WEBHOOK_HAS}` },
    ]);
  });

  it('a cron fire has no body; a section or an empty tag names nothing', () => {
    const warnings = promptVariableWarnings([trigger('nightly', 'cron', '{{ body.ref }} {{#items}}x{{/items}} {{ }}')], { triggers: [{ slug: 'nightly' }] });
    expect(warnings.map((w) => w.message.split(' names ')[0])).toEqual(['{{ body.ref }}', '{{ #items }}', '{{ /items }}', '{{  }}']);
    expect(warnings[0]!.message).toContain('of a cron fire and renders empty; it has trigger.slug, trigger.type, trigger.kind, cron.schedule, cron.timezone, cron.fired_at, cron.last_fired_at (fired by hand also fired_at, source, actor, message.text, message.source)');
  });

  it('an object without a prompt, or of a type no manifest gives, warns about nothing (a listing never fails on it)', () => {
    expect(promptTagWarnings({ type: 'cron', prompt: undefined as unknown as string })).toEqual([]);
    expect(promptTagWarnings({ type: 'email' as NormalizedTrigger['type'], prompt: '{{ payload.ref }}' })).toEqual([]);
    expect(promptTagWarnings({ type: 'webhook', prompt: '{{ payload.ref }}' })).toHaveLength(1);
  });
});
