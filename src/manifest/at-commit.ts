// The manifest of a commit: svc.yaml, else svc.toml (SPEC §2.1), checked. Callers bring their
// own file reader (a git mirror's `readFile(sha, path)`), so this stays free of git.
import { checkManifest, manifestTooLarge, type ManifestCheck } from './check.js';
import { MANIFEST_FILES, type ManifestFileName } from './parse.js';

export interface ManifestAtCommit {
  file: ManifestFileName;
  check: ManifestCheck;
}

/** A file's text, `{ bytes }` when the reader left it unread for its size (MANIFEST_MAX_BYTES), or null when absent. */
export type ManifestFileRead = string | { bytes: number } | null;

/** The checked manifest at `sha`, or null when the commit has neither file. */
export async function readManifestAt(
  readFile: (sha: string, path: string) => Promise<ManifestFileRead>, sha: string,
): Promise<ManifestAtCommit | null> {
  for (const file of MANIFEST_FILES) {
    const text = await readFile(sha, file);
    if (typeof text === 'string') return { file, check: checkManifest(file, text) };
    if (text !== null) return { file, check: manifestTooLarge(file, text.bytes) };
  }
  return null;
}
