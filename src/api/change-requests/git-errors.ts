// Errors of the git engine as API errors (docs/change-requests.md has the table). Engine
// messages carry no credentials, so they are safe to return.
import {
  BaseMovedError, conflictNames, MergeConflictError, GitEngineError, HeadMovedError, InvalidInputError, InvalidRefError, InvalidRemoteError,
  LocalRepoNotAllowedError, NothingToMergeError, PushRejectedError, RefNotFoundError, TimeoutError, UnreachableError,
} from '../../git/index.js';
import { ApiError } from '../errors.js';
import { CredentialsUnavailableError } from './store.js';

/** git's refusal of a push to the branch a non-bare repository has checked out. */
const CHECKED_OUT = /refusing to update checked out branch|branch is currently checked out/i;

export function apiErrorFromGit(error: unknown, context: { base: string; head: string }): unknown {
  if (error instanceof CredentialsUnavailableError) return new ApiError(502, `the repository cannot be reached: ${error.message}`);
  if (!(error instanceof GitEngineError)) return error;
  if (error instanceof MergeConflictError) {
    return new ApiError(409, `cannot merge ${context.head} into ${context.base}: conflicts in ${conflictNames(error.paths, error.total)}; ` +
      `merge ${context.base} into ${context.head}, resolve the conflicts, push, and merge again`, undefined,
    { conflicts: error.paths, ...(error.total > error.paths.length ? { conflicts_omitted: error.total - error.paths.length } : {}) });
  }
  if (error instanceof BaseMovedError) {
    return new ApiError(409, `the base branch ${error.branch} moved on the repository host while merging; nothing was merged, try again`);
  }
  if (error instanceof HeadMovedError) {
    return new ApiError(409, `the head branch ${context.head} moved: expected ${error.expectedSha}, it is now at ${error.actualSha}; review the new commits and merge again`);
  }
  if (error instanceof NothingToMergeError) return new ApiError(409, `nothing to merge: ${context.head} is already contained in ${context.base}`);
  if (error instanceof PushRejectedError) {
    // a project made from a working copy (svc dev: `--repo .` in one's own clone)
    if (CHECKED_OUT.test(error.reason)) {
      return new ApiError(409, `the repository host rejected the push to ${context.base}: ${context.base} is checked out in a working copy of the repository, `
        + 'and git does not update a checked-out branch; make the repository bare (git clone --bare), '
        + 'or let pushes update that working copy while it is clean: git config receive.denyCurrentBranch updateInstead, in it');
    }
    return new ApiError(409, `the repository host rejected the push to ${context.base}: ${error.reason}`);
  }
  if (error instanceof RefNotFoundError) {
    // (a branch deleted on the host after the change request was opened)
    const which = error.ref === context.head ? 'head' : error.ref === context.base ? 'base' : undefined;
    if (which) return new ApiError(404, `the ${which} branch ${error.ref} does not exist in the repository (any more): push it again, or close the change request`);
    return new ApiError(404, `branch or commit ${error.ref} does not exist in the repository`);
  }
  if (error instanceof InvalidRefError || error instanceof InvalidInputError || error instanceof LocalRepoNotAllowedError) return new ApiError(400, error.message);
  if (error instanceof UnreachableError || error instanceof InvalidRemoteError) return new ApiError(502, `the repository cannot be reached: ${error.message}`);
  if (error instanceof TimeoutError) return new ApiError(504, `the repository did not answer in time: ${error.message}`);
  return error;
}
