import { describe, expect, it } from 'vitest';
import { parseDuration } from './duration.js';

describe('parseDuration', () => {
  it.each([['90s', 90_000], ['15m', 900_000], ['12h', 43_200_000], ['30d', 2_592_000_000], ['2w', 1_209_600_000], [' 1d ', 86_400_000]])('%s', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });
  it.each(['', '0d', '30', 'd', '1.5h', '-1d', '30 days', '1y'])('refuses %j', (text) => {
    expect(parseDuration(text)).toBeNull();
  });
});
