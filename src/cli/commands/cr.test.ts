// Pure parts of `svc cr`: CR references, colouring, list formatting.
import { describe, expect, it } from 'vitest';
import { colorPatch, formatCrList, parseCrRef } from './cr.js';

describe('svc cr helpers', () => {
  it('accepts 3, #3 or a UUID as a CR reference', () => {
    expect(parseCrRef('3')).toEqual({ number: 3 });
    expect(parseCrRef('#12')).toEqual({ number: 12 });
    expect(parseCrRef('0B9B1F5E-1111-4111-8111-111111111111')).toEqual({ id: '0b9b1f5e-1111-4111-8111-111111111111' });
    for (const bad of ['0', '#', 'three', '3a', '-1']) expect(() => parseCrRef(bad)).toThrow(/is not a change request/);
  });

  it('colours added, removed, hunk and header lines only', () => {
    const out = colorPatch('diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n same');
    expect(out.split('\n')).toEqual([
      '\x1b[1mdiff --git a/x b/x\x1b[0m', '\x1b[1m--- a/x\x1b[0m', '\x1b[1m+++ b/x\x1b[0m', '\x1b[36m@@ -1 +1 @@\x1b[0m',
      '\x1b[31m-old\x1b[0m', '\x1b[32m+new\x1b[0m', ' same',
    ]);
  });

  it('says so when nothing matches the filter', () => {
    expect(formatCrList([], 'open')).toEqual(['No open change requests.']);
    expect(formatCrList([], 'all')).toEqual(['No change requests.']);
  });
});
