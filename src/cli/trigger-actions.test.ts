import { describe, expect, it } from 'vitest';
import { formatLiveListing, type TriggerView } from './trigger-actions.js';

const webhook = (slug: string, more: Partial<TriggerView>): TriggerView => ({
  slug, type: 'webhook', enabled: true, last_fired_at: null, next_fire_at: null, dormant: false, paused: false, secret_env: 'GH_WEBHOOK_SECRET', ...more,
});

describe('svc triggers ls --project', () => {
  it('says which webhook trigger refuses every delivery because its secret is not set, and how to set it', () => {
    const lines = formatLiveListing({
      triggers: [webhook('on-push', { secret_configured: false }), webhook('on-tag', { secret_configured: true }), webhook('off', { secret_configured: false, enabled: false })],
      errors: [],
    }, 'demo');
    expect(lines.slice(0, 4).map((l) => l.split(/\s+/)[0])).toEqual(['SLUG', 'on-push', 'on-tag', 'off']);
    expect(lines.slice(4)).toEqual([
      'on-push: the project secret GH_WEBHOOK_SECRET is not set, so every delivery is refused (409): printf %s "$SECRET" | svc secrets set GH_WEBHOOK_SECRET --project demo',
    ]);
  });

  it('prints each prompt tag that renders empty as a warning under the table', () => {
    const lines = formatLiveListing({
      triggers: [webhook('on-push', { secret_configured: true, prompt_warnings: ['{{ payload.ref }} names no variable of a webhook fire and renders empty; it has body.*'] })],
      errors: [],
    });
    expect(lines.slice(2)).toEqual(['warning: on-push prompt: {{ payload.ref }} names no variable of a webhook fire and renders empty; it has body.*']);
  });
});
