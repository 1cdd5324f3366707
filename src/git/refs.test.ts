import { describe, expect, it } from 'vitest';
import { InvalidRefError } from './errors.js';
import { branchNameProblem, isFullSha, revisionToRef, treePathProblem } from './refs.js';

describe('branch names', () => {
  it.each(['main', 'feature/x', 'release-1.2', '0b6a4f8e-1c2d-4e5f-8a9b-0c1d2e3f4a5b', 'a@b'])('accepts %s', (name) => {
    expect(branchNameProblem(name)).toBeNull();
  });
  it.each(['', '-x', '@', '/a', 'a/', 'a.', 'a..b', 'a//b', 'a@{1}', 'a b', 'a~1', 'a^', 'a:b', 'a?', 'a*', 'a[', 'a\\b', '.hidden', 'x/.y', 'a.lock', 'a/b.lock/c', 'tab\there', 'HEAD'])(
    'refuses %j', (name) => {
      expect(branchNameProblem(name)).not.toBeNull();
    },
  );
});

describe('revisions', () => {
  it('maps branch names under refs/heads and keeps full shas', () => {
    expect(revisionToRef('main')).toBe('refs/heads/main');
    expect(revisionToRef('a'.repeat(40))).toBe('a'.repeat(40));
    expect(isFullSha('A'.repeat(40))).toBe(false);
    expect(isFullSha('abc123')).toBe(false);
    expect(() => revisionToRef('HEAD~1')).toThrow(InvalidRefError);
  });
  it('checks tree paths', () => {
    expect(treePathProblem('svc.yaml')).toBeNull();
    expect(treePathProblem('dir/file.txt')).toBeNull();
    for (const bad of ['', '/abs', 'a/../b', './a', 'a//b', 'a\nb']) expect(treePathProblem(bad)).not.toBeNull();
  });
});
