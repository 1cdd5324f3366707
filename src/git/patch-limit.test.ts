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

  it('passes over a 32 MiB line in time linear in it, holding no more of it than a file may take', () => {
    // each chunk searched the whole line held so far: 32 MiB took 54 s (a one-line file pushed by an agent)
    const limiter = new PatchLimiter({ maxFileBytes: 512 * 1024, maxTotalBytes: 4 * 1024 * 1024 });
    const long = `diff --git a/one b/one\n@@ -0,0 +1 @@\n+${'y'.repeat(32 * 1024 * 1024)}\n`;
    const patch = Buffer.from(long + file('after', 2));
    let out = '';
    for (let i = 0; i < patch.length; i += 64 * 1024) out += limiter.push(patch.subarray(i, i + 64 * 1024));
    out += limiter.end();
    expect(out).toBe(`diff --git a/one b/one\n@@ -0,0 +1 @@\n${file('after', 2)}`);
    expect([...limiter.truncated]).toEqual([0]);
  }, 20_000);

  it('cuts the same lines however the output of git is split', () => {
    let seed = 7;
    const random = (n: number) => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed % n; };
    for (let round = 0; round < 200; round++) {
      const parts: string[] = [];
      for (let f = 0; f < 1 + random(4); f++) {
        parts.push(`diff --git a/f${f} b/f${f}\n`);
        for (let l = 0; l < random(6); l++) parts.push(`+${'é'.repeat(random(3) === 0 ? random(300) : random(20))}\n`);
      }
      if (random(2)) parts.push(`+${'z'.repeat(random(200))}`); // no final newline
      const patch = Buffer.from(parts.join(''));
      const limits = { maxFileBytes: 40 + random(200), maxTotalBytes: 100 + random(800) };
      const whole = new PatchLimiter(limits);
      const expected = whole.push(patch) + whole.end();
      const split = new PatchLimiter(limits);
      let out = '';
      for (let i = 0; i < patch.length;) {
        const size = 1 + random(50);
        out += split.push(patch.subarray(i, i + size));
        i += size;
      }
      out += split.end();
      expect(out).toBe(expected);
      expect([...split.truncated]).toEqual([...whole.truncated]);
      expect([split.full, split.fullAt]).toEqual([whole.full, whole.fullAt]);
    }
  });

  it('does not split multi-byte characters across chunks', () => {
    const limiter = new PatchLimiter({ maxFileBytes: 1000, maxTotalBytes: 1000 });
    const bytes = Buffer.from('diff --git a/é b/é\n+ü\n');
    const out = limiter.push(bytes.subarray(0, 13)) + limiter.push(bytes.subarray(13)) + limiter.end();
    expect(out).toBe('diff --git a/é b/é\n+ü\n');
  });
});
