// checkManifest: the manifest schema applied to one file's text (what the merge gate and
// `svc ship` pre-flight run). Pure: no file system.
import { manifestSchema } from './schema.js';
import { type ManifestIssue, plainMessages, toManifestIssues } from './issues.js';
import { type ManifestFileName, encodingOf, parseManifestText } from './parse.js';
import { isRecord } from './rules.js';
import { withKeyHints } from './suggest.js';

export interface ManifestCheck {
  file: ManifestFileName;
  version: 1 | 2 | null;
  valid: boolean;
  issues: ManifestIssue[];
  /** unknown keys that look like misspelled known ones: allowed (SPEC §2.1), so not issues */
  warnings: ManifestIssue[];
  /** the parsed document when the syntax is ok, else undefined */
  document: unknown;
}

/**
 * The largest manifest read and parsed (1 MiB). A manifest is a page of configuration; a larger
 * file is refused, never parsed: parsing tens of MB of YAML takes a process's CPU for tens of seconds
 * and GBs of memory (an agent's branch is untrusted, and the merge gate reads its manifest).
 */
export const MANIFEST_MAX_BYTES = 1024 * 1024;

/** The check of a manifest file larger than MANIFEST_MAX_BYTES: invalid, not parsed. */
export function manifestTooLarge(file: ManifestFileName, bytes: number): ManifestCheck {
  const message = `${file} is ${bytes} bytes; a manifest may be at most ${MANIFEST_MAX_BYTES} bytes (1 MiB)`;
  return { file, version: null, valid: false, issues: [{ path: '', message }], warnings: [], document: undefined };
}

export function checkManifest(file: ManifestFileName, text: string): ManifestCheck {
  const bytes = Buffer.byteLength(text);
  if (bytes > MANIFEST_MAX_BYTES) return manifestTooLarge(file, bytes);
  const parsed = parseManifestText(encodingOf(file) ?? 'yaml', text);
  if (!parsed.ok) return { file, version: null, valid: false, issues: [parsed.issue], warnings: [], document: undefined };
  const { document } = parsed;
  const version = isRecord(document) && (document.svc_version === 1 || document.svc_version === 2) ? document.svc_version : null;
  if (document === null || document === undefined) {
    return { file, version, valid: false, issues: [{ path: '', message: 'the manifest is empty: it needs at least svc_version' }], warnings: [], document };
  }
  const result = manifestSchema.safeParse(document, { error: plainMessages });
  const { issues, warnings } = withKeyHints(result.success ? [] : toManifestIssues(result.error.issues), document);
  return { file, version, valid: issues.length === 0, issues, warnings, document };
}

/**
 * The most issues a check shows where they are kept or sent: the merge gate's 422 and the merge
 * preview, the Project's status. The check itself keeps them all: which of them block is decided
 * on all of them (an issue of a skipped trigger entry does not).
 */
export const MAX_LISTED_ISSUES = 100;

/** The first MAX_LISTED_ISSUES of `issues`, then one saying how many more there are. */
export function listedIssues(issues: readonly ManifestIssue[]): ManifestIssue[] {
  if (issues.length <= MAX_LISTED_ISSUES) return [...issues];
  return [...issues.slice(0, MAX_LISTED_ISSUES), { path: '', message: `and ${issues.length - MAX_LISTED_ISSUES} more like these (the first ${MAX_LISTED_ISSUES} are listed)` }];
}
