import { describe, expect, it } from 'vitest';
import { examples, formatTable } from './output.js';

describe('output helpers', () => {
  it('formatTable pads columns, upper-cases headers and trims line ends', () => {
    expect(formatTable(['slug', 'type', 'next'], [['nightly', 'cron', '-'], ['gh', 'webhook', '']])).toEqual([
      'SLUG     TYPE     NEXT',
      'nightly  cron     -',
      'gh       webhook',
    ]);
  });

  it('examples aligns the comments', () => {
    expect(examples([['svc a', 'first'], ['svc abc', 'second']])).toBe('\nExamples:\n  $ svc a    # first\n  $ svc abc  # second\n');
  });
});
