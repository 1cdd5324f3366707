// Reading a project's repository: fetch the bare mirror, resolve the default branch tip, read
// svc.yaml (else svc.toml) there, check it and list its triggers. Returns an Observation for
// the pure code in desired.ts.
import { LocalRepoNotAllowedError, openMirror, redact, UnreachableError, type GitCredentials } from '../../src/git/index.js';
import { listTriggers, readManifestAt } from '../../src/manifest/index.js';
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
    let sha: string | null;
    let mirror;
    try {
      mirror = openMirror({ cacheDir: options.mirrorDir, projectId: project.metadata.uid!, url: project.spec.repoUrl, credentials, remoteTimeoutMs: options.fetchTimeoutMs });
      await mirror.fetch({ force: true });
      sha = await mirror.resolveBranch(branch);
    } catch (error) {
      // Messages of src/git errors carry the redacted URL only, never credentials.
      if (error instanceof LocalRepoNotAllowedError) return { kind: 'unreachable', reason: 'LocalRepoNotAllowed', message: error.message };
      // git's own words in the message; the reason says which kind of failure (host key, credentials, ...)
      const reason = error instanceof UnreachableError && error.kind !== 'Unreachable' ? error.kind : 'FetchFailed';
      return { kind: 'unreachable', reason, message: `could not fetch ${redact(project.spec.repoUrl)}: ${(error as Error).message}` };
    }
    if (!sha) return { kind: 'branch-missing', sha: null };
    const manifest = await readManifestAt((at, file) => mirror.readFile(at, file), sha);
    if (!manifest) return { kind: 'read', sha, manifest: null, triggers: [], triggerErrors: [] };
    const { file, check } = manifest;
    const listing = listTriggers(check);
    return {
      kind: 'read',
      sha,
      manifest: { file, version: check.version ?? null, valid: check.valid, issues: check.issues, parsed: check.document !== undefined && check.document !== null },
      triggers: listing.triggers.map((t) => triggerEntryFromManifest(t)),
      triggerErrors: listing.errors,
    };
  };
}
