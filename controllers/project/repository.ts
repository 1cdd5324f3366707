// Reading a project's repository: fetch the bare mirror, read the default branch tip and
// svc.yaml (else svc.toml) there in one git process, check it and list its triggers. Returns an
// Observation for the pure code in desired.ts.
import { LocalRepoNotAllowedError, openMirror, redact, unreachableReason, type GitCredentials } from '../../src/git/index.js';
import { MANIFEST_FILES, listTriggers, manifestDefaultAgent, readManifestAt } from '../../src/manifest/index.js';
import type { Project } from '../../src/resources/index.js';
import { triggerEntryFromManifest } from '../../src/triggers/index.js';
import type { Observation } from './desired.js';

export interface RepositoryReaderOptions {
  /** Where the bare mirrors live (one `<project uid>.git` each). */
  mirrorDir: string;
  /** Timeout of a fetch. */
  fetchTimeoutMs?: number;
}

export type ReadRepository = (project: Project, credentials: GitCredentials | null) => Promise<Observation>;

export function repositoryReader(options: RepositoryReaderOptions): ReadRepository {
  return async (project, credentials) => {
    const branch = project.spec.defaultBranch ?? 'main';
    let read: { sha: string | null; files: (string | null)[] };
    try {
      const mirror = openMirror({ cacheDir: options.mirrorDir, projectId: project.metadata.uid!, url: project.spec.repoUrl, credentials, remoteTimeoutMs: options.fetchTimeoutMs });
      await mirror.fetch({ force: true });
      // the tip and both manifest candidates in one git process
      read = await mirror.readBranchFiles(branch, MANIFEST_FILES);
    } catch (error) {
      // Messages of src/git errors carry the redacted URL only, never credentials.
      if (error instanceof LocalRepoNotAllowedError) return { kind: 'unreachable', reason: 'LocalRepoNotAllowed', message: error.message };
      // git's own words in the message; the reason says which kind of failure (host key, credentials, ...)
      const reason = unreachableReason(error) ?? 'FetchFailed';
      return { kind: 'unreachable', reason, message: `could not fetch ${redact(project.spec.repoUrl)}: ${(error as Error).message}` };
    }
    const sha = read.sha;
    if (!sha) return { kind: 'branch-missing', sha: null };
    const manifest = await readManifestAt(async (_at, file) => read.files[(MANIFEST_FILES as readonly string[]).indexOf(file)] ?? null, sha);
    if (!manifest) return { kind: 'read', sha, manifest: null, triggers: [], triggerErrors: [] };
    const { file, check } = manifest;
    const listing = listTriggers(check);
    const defaultAgent = manifestDefaultAgent(check.document);
    return {
      kind: 'read',
      sha,
      manifest: {
        file, version: check.version ?? null, valid: check.valid, issues: check.issues, parsed: check.document !== undefined && check.document !== null,
        ...(defaultAgent ? { defaultAgent } : {}),
      },
      triggers: listing.triggers.map((t) => triggerEntryFromManifest(t)),
      triggerErrors: listing.errors,
    };
  };
}

export interface RememberedReadsOptions {
  /** How long a read stands for the repository (the resync interval: the requeue reads it again). */
  maxAgeMs: number;
  /** Projects remembered at most (least recently read forgotten first). */
  limit?: number;
  now?: () => number;
}

/**
 * One read of a project's repository per resync interval: a reconcile that a change of its own
 * Triggers (creates, their status writes) or a retry brings within `maxAgeMs` of the last read of
 * the same spec reuses that read instead of fetching again. A new generation (spec edit) or a new
 * `svc.dev/refresh` token reads at once; so does the resync requeue, which comes `maxAgeMs` after.
 */
export function rememberedReads(read: ReadRepository, options: RememberedReadsOptions): ReadRepository {
  const now = options.now ?? Date.now;
  const limit = options.limit ?? 10_000;
  const reads = new Map<string, { key: string; at: number; observation: Observation }>();
  return async (project, credentials) => {
    const uid = project.metadata.uid ?? '';
    const key = `${project.metadata.generation ?? ''}|${project.metadata.annotations?.['svc.dev/refresh'] ?? ''}|${project.spec.repoUrl}|${project.spec.defaultBranch ?? ''}`;
    const last = reads.get(uid);
    if (last && last.key === key && now() - last.at < options.maxAgeMs) return last.observation;
    const at = now();
    const observation = await read(project, credentials);
    reads.delete(uid);
    reads.set(uid, { key, at, observation });
    if (reads.size > limit) reads.delete(reads.keys().next().value!);
    return observation;
  };
}
