import { describe, expect, it } from 'vitest';
import { clipText } from './clip.js';

describe('clipText', () => {
  it('keeps a text of at most max characters, and cuts a longer one to max with an ellipsis', () => {
    expect(clipText('abc', 3)).toBe('abc');
    expect(clipText('abcd', 3)).toBe('ab…');
    expect(clipText('x'.repeat(100_000), 4096)).toHaveLength(4096);
  });
});
