import { describe, expect, it } from 'vitest';
import { clipText, firstAndMore } from './clip.js';

describe('clipText', () => {
  it('keeps a text of at most max characters, and cuts a longer one to max with an ellipsis', () => {
    expect(clipText('abc', 3)).toBe('abc');
    expect(clipText('abcd', 3)).toBe('ab…');
    expect(clipText('x'.repeat(100_000), 4096)).toHaveLength(4096);
  });
});

describe('firstAndMore', () => {
  it('names the first items and counts the rest of the total', () => {
    expect(firstAndMore(['a', 'b'], 3)).toBe('a, b');
    expect(firstAndMore(['a', 'b', 'c', 'd'], 2)).toBe('a, b, and 2 more');
    expect(firstAndMore(['a', 'b'], 2, 5, '; ')).toBe('a; b; and 3 more');
  });
});
