// The manifest of a commit: svc.yaml, else svc.toml (SPEC §2.1), checked. Callers bring their
// own file reader (a git mirror's `readFile(sha, path)`), so this stays free of git.
import { checkManifest, manifestTooLarge, type ManifestCheck } from './check.js';
import { MANIFEST_FILES, encodingOf, parseManifestText, type ManifestFileName } from './parse.js';

export interface ManifestAtCommit {
  file: ManifestFileName;
  check: ManifestCheck;
}

/** A file's text, `{ bytes }` when the reader left it unread for its size (MANIFEST_MAX_BYTES), or null when absent. */
export type ManifestFileRead = string | { bytes: number } | null;

type FileReader = (sha: string, path: string) => Promise<ManifestFileRead>;

/** The manifest file at `sha` (svc.yaml, else svc.toml) as read, or null when the commit has neither. */
export async function readManifestFileAt(readFile: FileReader, sha: string): Promise<{ file: ManifestFileName; read: string | { bytes: number } } | null> {
  for (const file of MANIFEST_FILES) {
    const read = await readFile(sha, file);
    if (read !== null) return { file, read };
  }
  return null;
}

/** The checked manifest at `sha`, or null when the commit has neither file. */
export async function readManifestAt(readFile: FileReader, sha: string): Promise<ManifestAtCommit | null> {
  const found = await readManifestFileAt(readFile, sha);
  if (!found) return null;
  const { file, read } = found;
  return { file, check: typeof read === 'string' ? checkManifest(file, read) : manifestTooLarge(file, read.bytes) };
}

/**
 * The parsed document of the manifest at `sha`, not checked (what a session's start reads: its
 * agents); undefined when absent, too large or not parsable.
 */
export async function readManifestDocumentAt(readFile: FileReader, sha: string): Promise<unknown> {
  const found = await readManifestFileAt(readFile, sha);
  if (!found || typeof found.read !== 'string') return undefined;
  const parsed = parseManifestText(encodingOf(found.file) ?? 'yaml', found.read);
  return parsed.ok ? parsed.document : undefined;
}
