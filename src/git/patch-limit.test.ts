import { describe, expect, it } from 'vitest';
import { PatchLimiter } from './patch-limit.js';

const file = (name: string, lines: number) => `diff --git a/${name} b/${name}\n--- a/${name}\n+++ b/${name}\n@@ -0,0 +1,${lines} @@\n${'+x\n'.repeat(lines)}`;

describe('PatchLimiter', () => {
  it('cuts a file over the per-file cap at a line boundary and keeps the next file', () => {
    const limiter = new PatchLimiter({ maxFileBytes: 100, maxTotalBytes: 10_000 });
    const patch = file('big', 100) + file('small', 2);
    // fed in odd pieces, split inside lines
    let out = '';
    for (let i = 0; i < patch.length; i += 7) out += limiter.push(Buffer.from(patch.slice(i, i + 7)));
    out += limiter.end();
    expect([...limiter.truncated]).toEqual([0]);
    expect(out.startsWith('diff --git a/big b/big\n')).toBe(true);
    expect(out).toContain(file('small', 2));
    expect(out.split('\n').every((line) => line === '' || /^(diff|---|\+\+\+|@@|\+x)/.test(line))).toBe(true);
    expect(Buffer.byteLength(out)).toBeLessThanOrEqual(100 + file('small', 2).length);
  });

  it('stops at the total cap and marks every later file', () => {
    const limiter = new PatchLimiter({ maxFileBytes: 1000, maxTotalBytes: 150 });
    const out = limiter.push(Buffer.from(file('a', 10) + file('b', 10) + file('c', 1))) + limiter.end();
    expect(limiter.full).toBe(true);
    expect([...limiter.truncated].sort()).toEqual([1, 2]);
    expect(Buffer.byteLength(out)).toBeLessThanOrEqual(150);
    expect(out).toContain('diff --git a/a b/a');
  });

  it('does not split multi-byte characters across chunks', () => {
    const limiter = new PatchLimiter({ maxFileBytes: 1000, maxTotalBytes: 1000 });
    const bytes = Buffer.from('diff --git a/é b/é\n+ü\n');
    const out = limiter.push(bytes.subarray(0, 13)) + limiter.push(bytes.subarray(13)) + limiter.end();
    expect(out).toBe('diff --git a/é b/é\n+ü\n');
  });
});
