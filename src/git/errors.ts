// Typed errors of the git engine. Every message is safe to show to a caller: URLs are
// redacted and credential values never appear (see redact.ts).
import { clipText, firstAndMore } from '../lib/clip.js';

export type GitErrorCode =
  | 'REF_NOT_FOUND'
  | 'INVALID_REF'
  | 'INVALID_INPUT'
  | 'CONFLICT'
  | 'BASE_MOVED'
  | 'HEAD_MOVED'
  | 'NOTHING_TO_MERGE'
  | 'BRANCH_EXISTS'
  | 'PUSH_REJECTED'
  | 'UNREACHABLE'
  | 'INVALID_REMOTE'
  | 'LOCAL_REPO_NOT_ALLOWED'
  | 'TIMEOUT'
  | 'GIT_ERROR';

/** Base class of every error the engine throws. */
export class GitEngineError extends Error {
  constructor(readonly code: GitErrorCode, message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** A branch or commit that does not exist in the mirror. */
export class RefNotFoundError extends GitEngineError {
  constructor(readonly ref: string) {
    super('REF_NOT_FOUND', `ref '${ref}' not found`);
  }
}

/** A name that is not a valid branch name or a full commit id. */
export class InvalidRefError extends GitEngineError {
  constructor(readonly ref: string, readonly reason: string) {
    super('INVALID_REF', `invalid ref '${ref}': ${reason}`);
  }
}

/** Another argument the engine cannot use (an empty merge message, a bad file path). */
export class InvalidInputError extends GitEngineError {
  constructor(readonly field: string, reason: string) {
    super('INVALID_INPUT', `invalid ${field}: ${reason}`);
  }
}

/** A three-way merge that cannot be done without resolving conflicts (not a Kubernetes write conflict: that is src/kube's ConflictError). */
export class MergeConflictError extends GitEngineError {
  /** `paths`: the conflicting paths listed (the first MAX_LISTED_CONFLICTS); `total`: how many conflict in all. */
  constructor(readonly paths: string[], readonly total = paths.length) {
    super('CONFLICT', `merge has conflicts in ${total} file(s): ${conflictNames(paths, total)}; resolve the conflicts first`);
  }
}

/** The conflicting paths a message names: the first ten, then how many more (the preview lists them). */
export function conflictNames(paths: readonly string[], total = paths.length): string {
  return firstAndMore(paths.slice(0, 10).map((p) => clipText(p, 256)), 10, total);
}

/** The base branch moved on the host between reading it and pushing (lease failed). */
export class BaseMovedError extends GitEngineError {
  constructor(readonly branch: string, readonly expectedSha: string) {
    super('BASE_MOVED', `branch '${branch}' moved on the host since ${expectedSha.slice(0, 12)}; nothing was merged, retry`);
  }
}

/** The head branch is not at the sha the caller expected. */
export class HeadMovedError extends GitEngineError {
  constructor(readonly branch: string, readonly expectedSha: string, readonly actualSha: string) {
    super('HEAD_MOVED', `head '${branch}' is at ${actualSha.slice(0, 12)}, not the expected ${expectedSha.slice(0, 12)}`);
  }
}

/** Merge asked for a head that is already contained in the base. */
export class NothingToMergeError extends GitEngineError {
  constructor(readonly base: string, readonly head: string) {
    super('NOTHING_TO_MERGE', `'${head}' is already merged into '${base}'`);
  }
}

/** Create-only branch push found the branch already there at another commit. */
export class BranchExistsError extends GitEngineError {
  constructor(readonly branch: string) {
    super('BRANCH_EXISTS', `branch '${branch}' already exists on the host`);
  }
}

/** The host refused a push for a reason other than a moved ref (hook, protection, ...). */
export class PushRejectedError extends GitEngineError {
  constructor(readonly ref: string, readonly reason: string) {
    super('PUSH_REJECTED', `the host rejected the push to '${ref}': ${reason}`);
  }
}

/** Why a remote could not be used, as a condition reason says it. */
export type UnreachableKind = 'HostKeyVerificationFailed' | 'AuthenticationFailed' | 'RepositoryNotFound' | 'HostUnreachable' | 'Unreachable';

/** The remote could not be reached, was not found, or refused the credentials; `detail` is git's own (redacted) words. */
export class UnreachableError extends GitEngineError {
  constructor(readonly url: string, readonly detail: string, readonly kind: UnreachableKind = 'Unreachable') {
    super('UNREACHABLE', `repository ${url} is unreachable: ${detail}`);
  }
}

/** The specific reason a failure had (host key, credentials, repository, host), or null: the one classification Project and Session reasons share. */
export function unreachableReason(error: unknown): ClassifiedUnreachableKind | null {
  return error instanceof UnreachableError && error.kind !== 'Unreachable' ? error.kind : null;
}
export type ClassifiedUnreachableKind = Exclude<UnreachableKind, 'Unreachable'>;

/** A remote URL or credentials the engine cannot use (message redacted). */
export class InvalidRemoteError extends GitEngineError {
  constructor(readonly displayUrl: string, reason: string) {
    super('INVALID_REMOTE', `invalid repository URL ${displayUrl}: ${reason}`);
  }
}

/** A local path or file:// URL where local repositories are not allowed (SVC_ALLOW_LOCAL_REPOS unset). */
export class LocalRepoNotAllowedError extends GitEngineError {
  constructor(readonly displayUrl: string) {
    super('LOCAL_REPO_NOT_ALLOWED', `repository ${displayUrl} is a local path: local repositories (paths, file://) are allowed only when svc runs with SVC_ALLOW_LOCAL_REPOS=1 (svc dev sets it); use an http(s) or ssh URL`);
  }
}

/** A git call ran past its timeout and was killed. */
export class TimeoutError extends GitEngineError {
  constructor(readonly command: string, readonly timeoutMs: number) {
    super('TIMEOUT', `git ${command} timed out after ${timeoutMs} ms`);
  }
}

/** Any other git failure; `stderr` is redacted. */
export class GitError extends GitEngineError {
  constructor(readonly command: string, readonly exitCode: number | null, readonly stderr: string) {
    super('GIT_ERROR', `git ${command} failed (exit ${exitCode ?? 'signal'}): ${stderr.trim() || 'no message'}`);
  }
}
