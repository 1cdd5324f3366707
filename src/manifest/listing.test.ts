import { describe, expect, it } from 'vitest';
import { stringify as toYaml } from 'yaml';
import TOML from '@iarna/toml';
import { checkManifest, listTriggers } from './index.js';

type Doc = Record<string, unknown>;
const ENCODINGS = [
  ['svc.yaml', (d: Doc) => toYaml(d)],
  ['svc.toml', (d: Doc) => TOML.stringify(d as TOML.JsonMap)],
] as const;

const v2 = (triggers: Doc[]): Doc => ({ svc_version: 2, default_agent: 'build', agents: { build: {}, review: {} }, triggers });
const v1 = (triggers: Doc[]): Doc => ({ svc_version: 1, triggers });

describe.each(ENCODINGS)('trigger listing from %s', (file, encode) => {
  const listing = (doc: Doc) => listTriggers(checkManifest(file, encode(doc)));

  it('fills every default (version 2: agent = default_agent)', () => {
    expect(listing(v2([{ slug: 'nightly', type: 'cron', prompt: 'go', cron: '0 0 3 * * *' }]))).toEqual({
      triggers: [{
        slug: 'nightly', type: 'cron', name: 'nightly', prompt: 'go', agent: 'build',
        session_mode: 'fresh', enabled: true, timezone: 'UTC', cron: '0 0 3 * * *',
      }],
      errors: [],
    });
  });

  it('fills agent = default in version 1', () => {
    expect(listing(v1([{ slug: 'gh', type: 'webhook', prompt: 'go', secret_env: 'GH' }])).triggers).toEqual([{
      slug: 'gh', type: 'webhook', name: 'gh', prompt: 'go', agent: 'default',
      session_mode: 'fresh', enabled: true, timezone: 'UTC', secret_env: 'GH',
    }]);
  });

  // [alias, value written, canonical field, normalized value]
  const ALIASES: [string, unknown, string, unknown][] = [
    ['prompt_template', 'hello {{ trigger.slug }}', 'prompt', 'hello {{ trigger.slug }}'],
    ['agent_name', 'review', 'agent', 'review'],
    ['sessionMode', 'REUSE', 'session_mode', 'reuse'],
    ['schedule', '0  */5 * * * *', 'cron', '0 */5 * * * *'],
    ['runAt', '2030-01-31T10:00:00+01:00', 'run_at', '2030-01-31T09:00:00.000Z'],
    ['secretEnv', 'HOOK_SECRET', 'secret_env', 'HOOK_SECRET'],
  ];
  it.each(ALIASES)('resolves the alias %s', (alias, value, canonical, normalized) => {
    const base: Doc = alias === 'secretEnv'
      ? { slug: 't', type: 'webhook', prompt: 'p' }
      : { slug: 't', type: 'cron', prompt: 'p', ...(alias === 'schedule' || alias === 'runAt' ? {} : { cron: '0 0 3 * * *' }) };
    if (alias === 'prompt_template') delete base.prompt;
    const { triggers, errors } = listing(v2([{ ...base, [alias]: value }]));
    expect(errors).toEqual([]);
    expect(triggers[0]).toMatchObject({ [canonical]: normalized });
    expect(triggers[0]).not.toHaveProperty(alias);
  });

  it('keeps the values given over the defaults, session_mode lower-cased', () => {
    const [t] = listing(v2([{
      slug: 'nightly', type: 'cron', prompt: 'go', cron: '0 0 3 * * *', name: 'Nightly run', agent: 'review',
      model: 'anthropic/claude-sonnet-4', session_mode: 'Reuse', enabled: false, timezone: 'Europe/Paris',
    }])).triggers;
    expect(t).toEqual({
      slug: 'nightly', type: 'cron', name: 'Nightly run', prompt: 'go', agent: 'review', model: 'anthropic/claude-sonnet-4',
      session_mode: 'reuse', enabled: false, timezone: 'Europe/Paris', cron: '0 0 3 * * *',
    });
  });

  it('lists invalid entries in errors with index, slug and every reason, next to the valid ones', () => {
    const result = listing(v2([
      { slug: 'ok-1', type: 'cron', prompt: 'p', cron: '0 0 3 * * *' },
      { slug: 'Bad Slug', type: 'cron', prompt: 'p', cron: '0 3 * * *', timezone: 'Nowhere/Land' },
      { type: 'webhook', prompt: 'p' },
      { slug: 'ok-1', type: 'webhook', prompt: 'p', secret_env: 'S', agent: 'ghost' },
      { slug: 'ok-2', type: 'webhook', prompt: 'p', secret_env: 'S' },
    ]));
    expect(result.triggers.map((t) => t.slug)).toEqual(['ok-1', 'ok-2']);
    expect(result.errors).toEqual([
      {
        index: 1,
        slug: 'Bad Slug',
        messages: [
          expect.stringMatching(/^slug: must match \^\[a-z0-9\]/),
          'timezone: must be an IANA time zone name, such as UTC or Europe/Paris',
          expect.stringMatching(/^cron: must have exactly 6 fields .* found 5$/),
        ],
      },
      {
        index: 2,
        messages: ['slug: is required', expect.stringMatching(/^secret_env: a webhook trigger needs secret_env/)],
      },
      {
        index: 3,
        slug: 'ok-1',
        messages: ['slug: is already used by trigger 0: trigger slugs must be unique', 'agent: must name a key of agents (build, review)'],
      },
    ]);
  });

  it('works on a document that fails the manifest schema elsewhere', () => {
    const doc = { ...v2([{ slug: 'a', type: 'cron', prompt: 'p', cron: '0 0 3 * * *' }]), sandboxes: ['x'], default_agent: 'ghost' };
    const check = checkManifest(file, encode(doc));
    expect(check.valid).toBe(false);
    expect(listTriggers(check)).toEqual({
      triggers: [],
      errors: [{ index: 0, slug: 'a', messages: ['agent: is omitted, so it is default_agent ghost, which is not a key of agents (build, review)'] }],
    });
  });
});

describe('listing edge cases', () => {
  it('a manifest that does not parse lists nothing', () => {
    expect(listTriggers(checkManifest('svc.yaml', 'triggers: [\n'))).toEqual({ triggers: [], errors: [] });
  });
  it('an entry that is not a mapping is an error', () => {
    expect(listTriggers({ document: { svc_version: 1, triggers: ['nightly'] } }).errors)
      .toEqual([{ index: 0, messages: [expect.stringContaining('must be a mapping')] }]);
  });
});
