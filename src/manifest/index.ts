// Public API of the manifest library (SPEC §2.1, §2.5). See docs/manifest.md.
export type { ManifestIssue } from './issues.js';
export { MANIFEST_FILES, type ManifestFileName } from './parse.js';
export { checkManifest, listedIssues, manifestTooLarge, MANIFEST_MAX_BYTES, MAX_LISTED_ISSUES, type ManifestCheck } from './check.js';
export { ManifestCheckThread, ManifestCheckUnavailable } from './check-thread.js';
export { readManifestAt, readManifestDocumentAt, readManifestFileAt, type ManifestAtCommit } from './at-commit.js';
export { listTriggers, listedTriggerErrors, MAX_LISTED_TRIGGER_ERRORS, type TriggerListing, type TriggerListingError } from './listing.js';
export { manifestDefaultAgent, type NormalizedTrigger, TRIGGER_ALIASES } from './trigger.js';
export { parseCron, isIanaZone } from './cron.js';
export { checkAgentFiles, checkAgentFrontMatter, engineDirOf, DEFAULT_ENGINE_DIR, type AgentFileIssue } from './agentfiles.js';
export { findManifestFile, checkManifestFile } from './files.js';
export { CAPABILITIES } from './rules.js';
