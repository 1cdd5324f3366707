// Public API of the git engine (docs/git.md). No Kubernetes here: callers pass values.
export { openMirror, pruneMirrors, Mirror, DEFAULT_MERGE_IDENTITY } from './mirror.js';
export type { BlobTooLarge, MirrorOptions, GitIdentity, DiffMode, DiffOptions, DiffResult, MergePreview, MergeRequest, MergeResult } from './mirror.js';
export { DEFAULT_PATCH_LIMITS, type PatchLimits } from './patch-limit.js';
export type { DiffFile, FileStatus } from './diffparse.js';
export type { BasicCredentials, GitCredentials, SshCredentials } from './remote.js';
export { isSshCredentials } from './remote.js';
export { branchNameProblem, isFullSha } from './refs.js';
export { isLocalRepoUrl, localReposAllowed, localRepoRefusal, remoteProblem } from './remote.js';
export { redact } from './redact.js';
export {
  GitEngineError, RefNotFoundError, InvalidRefError, InvalidInputError, MergeConflictError, BaseMovedError, HeadMovedError,
  NothingToMergeError, BranchExistsError, PushRejectedError, UnreachableError, InvalidRemoteError, LocalRepoNotAllowedError,
  TimeoutError, GitError, unreachableReason, conflictNames,
} from './errors.js';
export type { ClassifiedUnreachableKind, GitErrorCode, UnreachableKind } from './errors.js';
export {
  advertiseRefs, advertisementError, serveUploadPack, serveReceivePack, ensureGatewayHooks, setMirrorHead, GIT_SERVICES,
} from './gateway.js';
export type { GitService, ReceivePackOptions } from './gateway.js';
export {
  receivePush, sweepPushQuarantine, pushQuarantineDir, PushTooLargeError, PushTooManyRefsError, DEFAULT_MAX_PUSH_BYTES, MAX_PUSH_COMMANDS, type ReceivedPush,
} from './push-quarantine.js';
export { useGitSpawnWorkers } from './spawn-pool.js';
export { killRunningGit } from './exec.js';
