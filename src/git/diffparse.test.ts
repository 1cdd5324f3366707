import { describe, expect, it } from 'vitest';
import { ConflictCollector, DiffFileCollector } from './diffparse.js';

function parseRawNumstat(output: string) {
  const collector = new DiffFileCollector(Number.POSITIVE_INFINITY);
  collector.push(Buffer.from(output));
  return collector.end().files;
}

describe('DiffFileCollector', () => {
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
  it('read in pieces of any size, it lists the first files and counts them all', () => {
    const raw = [':100644 100644 5d3eb98 4a27031 M', 'a', ':000000 100644 0000000 3e75765 A', 'é b', ':100644 000000 3e75765 0000000 D', 'c'].join('\0');
    const output = Buffer.from(`${raw}\0${['1\t2\ta', '-\t-\té b', '0\t5\tc'].join('\0')}\0`);
    for (const size of [1, 2, 3, 7, output.length]) {
      const collector = new DiffFileCollector(2);
      for (let i = 0; i < output.length; i += size) collector.push(output.subarray(i, i + size));
      expect(collector.end()).toEqual({
        files: [
          { path: 'a', status: 'modified', additions: 1, deletions: 2, binary: false, truncated: false },
          { path: 'é b', status: 'added', additions: 0, deletions: 0, binary: true, truncated: false },
        ],
        total: 3, additions: 1, deletions: 7,
      });
    }
    expect(() => { const c = new DiffFileCollector(); c.push(Buffer.from(`${raw}\0x\0`)); c.end(); }).toThrow(/unexpected git diff --numstat output/);
  });

  it('empty diff', () => {
    expect(parseRawNumstat('')).toEqual([]);
  });
});

describe('ConflictCollector', () => {
  it('read in pieces of any size, it keeps the tree, lists the first paths and counts them all', () => {
    const tree = 'a'.repeat(40);
    const output = Buffer.from(`${tree}\0é one\0two\0three\0\0`);
    for (const size of [1, 2, 3, 7, output.length]) {
      const collector = new ConflictCollector(2);
      for (let i = 0; i < output.length; i += size) collector.push(output.subarray(i, i + size));
      expect(collector.end()).toEqual({ tree, paths: ['é one', 'two'], total: 3 });
    }
  });

  it('a clean merge: only the tree, with or without its NUL', () => {
    for (const output of ['t\0', 't']) {
      const collector = new ConflictCollector();
      collector.push(Buffer.from(output));
      expect(collector.end()).toEqual({ tree: 't', paths: [], total: 0 });
    }
  });
});
