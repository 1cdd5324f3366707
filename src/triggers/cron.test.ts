import { describe, expect, it } from 'vitest';
import type { NormalizedTrigger } from '../manifest/index.js';
import { nextCronFire, nextFire } from './cron.js';

const base: NormalizedTrigger = {
  slug: 't', type: 'cron', name: 't', prompt: 'p', agent: 'default', session_mode: 'fresh', enabled: true, timezone: 'UTC',
};

describe('next cron fire', () => {
  it.each([
    ['0 0 3 * * *', 'UTC', '2030-01-31T10:00:00Z', '2030-02-01T03:00:00.000Z'],
    ['0 0 3 * * *', 'Europe/Paris', '2030-01-31T10:00:00Z', '2030-02-01T02:00:00.000Z'],
    ['0 0 3 * * *', 'Europe/Paris', '2030-07-01T10:00:00Z', '2030-07-02T01:00:00.000Z'],
    ['30 */15 * * * 1-5', 'UTC', '2030-02-01T23:59:00Z', '2030-02-04T00:00:30.000Z'],
  ])('%s in %s after %s is %s', (expr, tz, after, expected) => {
    expect(nextCronFire(expr, tz, new Date(after)).toISOString()).toBe(expected);
  });

  it('refuses a 5-field expression', () => {
    expect(() => nextCronFire('0 3 * * *', 'UTC', new Date())).toThrow('exactly 6 fields');
  });

  it('a run_at trigger fires at its instant until it has fired', () => {
    const once = { ...base, run_at: '2030-01-31T09:00:00.000Z' };
    expect(nextFire(once, new Date('2029-01-01T00:00:00Z'))?.toISOString()).toBe('2030-01-31T09:00:00.000Z');
    expect(nextFire(once, new Date('2031-01-01T00:00:00Z'), new Date('2030-01-31T09:00:10Z'))).toBeNull();
  });

  it('webhooks and disabled triggers never fire by schedule', () => {
    expect(nextFire({ ...base, type: 'webhook', secret_env: 'S' }, new Date())).toBeNull();
    expect(nextFire({ ...base, cron: '0 0 3 * * *', enabled: false }, new Date())).toBeNull();
  });
});
