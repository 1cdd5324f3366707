// Public API of the git engine (docs/git.md). No Kubernetes here: callers pass values.
export { openMirror, pruneMirrors, Mirror, DEFAULT_MERGE_IDENTITY } from './mirror.js';
export type { MirrorOptions, GitIdentity, DiffMode, DiffOptions, DiffResult, MergePreview, MergeRequest, MergeResult } from './mirror.js';
export { DEFAULT_PATCH_LIMITS, type PatchLimits } from './patch-limit.js';
export type { DiffFile, FileStatus } from './diffparse.js';
export type { GitCredentials } from './remote.js';
export { branchNameProblem, isFullSha } from './refs.js';
export { isLocalRepoUrl, localReposAllowed, localRepoRefusal } from './remote.js';
export { redact } from './redact.js';
export {
  GitEngineError, RefNotFoundError, InvalidRefError, InvalidInputError, ConflictError, BaseMovedError, HeadMovedError,
  NothingToMergeError, BranchExistsError, PushRejectedError, UnreachableError, InvalidRemoteError, LocalRepoNotAllowedError,
  TimeoutError, GitError,
} from './errors.js';
export type { GitErrorCode } from './errors.js';
export {
  advertiseRefs, serveUploadPack, serveReceivePack, ensureGatewayHooks, setMirrorHead, errorPacket, GIT_SERVICES,
} from './gateway.js';
export type { GitService, ReceivePackOptions } from './gateway.js';
export { useGitSpawnWorkers } from './spawn-pool.js';
