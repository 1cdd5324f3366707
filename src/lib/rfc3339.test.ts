import { expect, it } from 'vitest';
import { parseRfc3339 } from './rfc3339.js';

it('takes RFC 3339 times with an offset, on days the calendar has', () => {
  expect(parseRfc3339('2026-01-31T00:00:00Z')).toBe(Date.UTC(2026, 0, 31));
  expect(parseRfc3339('2026-01-31T01:30:00.5+01:30')).toBe(Date.UTC(2026, 0, 31) + 500);
  expect(parseRfc3339('2028-02-29T00:00:00Z')).toBe(Date.UTC(2028, 1, 29));
  // Date.parse takes the first as March 2nd and the second as local time
  for (const bad of ['2026-02-30T00:00:00Z', '2030-01-01T00:00:00', '2027-02-29T00:00:00Z', '2026-13-01T00:00:00Z', '2026-01-01', 'now']) {
    expect(parseRfc3339(bad), bad).toBeNull();
  }
});
