import { describe, expect, it } from 'vitest';
import { bootTimelineRows, formatDurationMs } from './boot-phases.js';

describe('the boot timeline, drawn', () => {
  it('durations for people', () => {
    expect([0, 999.6, 1000, 1254, 59_994, 125_000].map(formatDurationMs)).toEqual(['0 ms', '1.00 s', '1.00 s', '1.25 s', '59.99 s', '2 min 5 s']);
  });

  it('offsets from the first phase; a clock a little behind never gives a negative duration', () => {
    expect(bootTimelineRows([
      { phase: 'sandbox', started_at: '2026-01-01T00:00:00.500Z', ended_at: '2026-01-01T00:00:00.480Z' },
      { phase: 'daemon', started_at: '2026-01-01T00:00:00.480Z', ended_at: '2026-01-01T00:00:00.600Z' },
    ])).toEqual({ rows: [{ phase: 'sandbox', offsetMs: 20, durationMs: 0 }, { phase: 'daemon', offsetMs: 0, durationMs: 120 }], startedAt: '2026-01-01T00:00:00.480Z', totalMs: 120 });
  });
});
