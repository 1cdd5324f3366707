import { describe, expect, it } from 'vitest';
import { CliError } from '../output.js';
import { formatBudget, formatLogs, formatProviders, formatUsage, parseLimit, parseSince } from './gateway.js';

describe('svc gateway formatting and flags', () => {
  it('--since takes RFC 3339 or a duration back from now', () => {
    const now = Date.parse('2026-03-02T12:00:00Z');
    expect(parseSince('24h', now)).toBe('2026-03-01T12:00:00.000Z');
    expect(parseSince('7d', now)).toBe('2026-02-23T12:00:00.000Z');
    expect(parseSince('2026-01-31T00:00:00Z', now)).toBe('2026-01-31T00:00:00Z');
    expect(() => parseSince('yesterday', now)).toThrow(CliError);
  });

  it('limits are whole numbers or none', () => {
    expect(parseLimit('2000000', '--max-tokens')).toBe(2_000_000);
    expect(parseLimit('none', '--max-tokens')).toBeNull();
    expect(() => parseLimit('-1', '--max-tokens')).toThrow(/whole number/);
    expect(() => parseLimit('1e6', '--max-tokens')).toThrow(/whole number/);
  });

  it('tables name what they show; no provider says how to add one', () => {
    expect(formatProviders([])[0]).toMatch(/svc gateway providers set openai/);
    expect(formatProviders([{ name: 'openai', protocol: 'openai', base_url: 'https://api.openai.com/v1', updated_at: null }])).toEqual([
      'NAME    PROTOCOL  BASE URL                   UPDATED',
      'openai  openai    https://api.openai.com/v1  -',
    ]);
    const usage = formatUsage({ total: { requests: 3, input_tokens: 30, output_tokens: 15 }, groups: [{ key: null, requests: 3, input_tokens: 30, output_tokens: 15 }] }, 'trigger');
    expect(usage[1]).toMatch(/^-\s+3\s+30\s+15\s+45$/);
    expect(usage.at(-1)).toBe('Total: 3 requests, 30 input + 15 output = 45 tokens');
    expect(formatLogs([])).toEqual(['No model requests recorded.']);
    expect(formatBudget({ budget: { period: 'day', max_tokens: 100, max_tokens_per_session: null }, used: { period_tokens: 42 } })).toEqual([
      'Period:               day',
      'Project limit:        100 tokens',
      'Per-session limit:    none',
      'Used this day (UTC):  42 tokens',
    ]);
    // a request that started under the limit may end past it: how far, and what it means
    expect(formatBudget({ budget: { period: 'day', max_tokens: 20, max_tokens_per_session: null }, used: { period_tokens: 33 } }).at(-1))
      .toBe('Used this day (UTC):  33 tokens: used up, model requests get 429 until the next day (UTC) or a higher limit');
    expect(formatBudget({ budget: { period: 'total', max_tokens: 20, max_tokens_per_session: null }, used: { period_tokens: 20 } }).at(-1))
      .toBe('Used all time:      20 tokens: used up, model requests get 429 until the limit is raised');
  });
});
