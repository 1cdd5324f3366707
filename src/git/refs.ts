// Ref validation done in-process, so user input never reaches git as an option or a
// revision expression (`main~1`, `a..b`, `--upload-pack=...`).
import { InvalidRefError } from './errors.js';

const FULL_SHA = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

export function isFullSha(value: string): boolean {
  return FULL_SHA.test(value);
}

/** Why `name` is not a valid branch name (git check-ref-format rules), or null if it is. */
export function branchNameProblem(name: string): string | null {
  if (name.length === 0) return 'empty';
  if (name.length > 255) return 'longer than 255 characters';
  if (name.startsWith('-')) return 'starts with "-"';
  if (name === '@') return 'is "@"';
  if (name === 'HEAD') return 'is "HEAD" (git refuses it as a branch name)';
  if (name.startsWith('/') || name.endsWith('/')) return 'starts or ends with "/"';
  if (name.endsWith('.')) return 'ends with "."';
  if (name.includes('..')) return 'contains ".."';
  if (name.includes('//')) return 'contains "//"';
  if (name.includes('@{')) return 'contains "@{"';
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x20\x7f~^:?*[\\]/.test(name)) return 'contains a space, a control character or one of ~^:?*[\\';
  for (const part of name.split('/')) {
    if (part.startsWith('.')) return 'a component starts with "."';
    if (part.endsWith('.lock')) return 'a component ends with ".lock"';
  }
  return null;
}

export function assertBranchName(name: string): void {
  const problem = branchNameProblem(name);
  if (problem) throw new InvalidRefError(name, problem);
}

/** A revision as the caller gives it: a branch name, or a full commit id. */
export function revisionToRef(rev: string): string {
  if (isFullSha(rev)) return rev;
  assertBranchName(rev);
  return `refs/heads/${rev}`;
}

/** A path inside a repository for `<commit>:<path>` lookups. */
export function treePathProblem(path: string): string | null {
  if (path.length === 0) return 'empty';
  if (path.startsWith('/')) return 'absolute';
  if (path.includes('\n') || path.includes('\0')) return 'contains a newline or NUL';
  if (path.split('/').some((part) => part === '' || part === '.' || part === '..')) return 'has an empty, "." or ".." component';
  return null;
}
