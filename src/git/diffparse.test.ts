import { describe, expect, it } from 'vitest';
import { parseRawNumstat } from './diffparse.js';

describe('parseRawNumstat', () => {
  it('pairs raw statuses with numstat counts in order, binaries as 0/0', () => {
    const raw = [
      ':100644 100644 5d3eb98 4a27031 M', 'bin',
      ':000000 100644 0000000 3e75765 A', 'odd\tname:with colon',
      ':100644 000000 3e75765 0000000 D', 'gone',
      ':100644 120000 3e75765 1234567 T', 'link',
    ].join('\0');
    const numstat = ['-\t-\tbin', '2\t0\todd\tname:with colon', '0\t1\tgone', '1\t1\tlink'].join('\0');
    expect(parseRawNumstat(`${raw}\0${numstat}\0`)).toEqual([
      { path: 'bin', status: 'modified', additions: 0, deletions: 0, binary: true, truncated: false },
      { path: 'odd\tname:with colon', status: 'added', additions: 2, deletions: 0, binary: false, truncated: false },
      { path: 'gone', status: 'deleted', additions: 0, deletions: 1, binary: false, truncated: false },
      { path: 'link', status: 'modified', additions: 1, deletions: 1, binary: false, truncated: false },
    ]);
  });
  it('empty diff', () => {
    expect(parseRawNumstat('')).toEqual([]);
  });
});
