// zod issues -> { path (JSON pointer), message (a sentence a person understands) }.
import type * as z from 'zod';

export type ManifestIssue = { path: string; message: string };

/** RFC 6901 JSON pointer of a path. */
export function jsonPointer(path: readonly PropertyKey[]): string {
  return path.map((p) => `/${String(p).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
}

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  object: 'a mapping (a table in TOML)',
  record: 'a mapping (a table in TOML)',
  array: 'a list (an array in TOML)',
};

/** Wording for the issues whose schema gives no message of its own. */
export const plainMessages: z.core.$ZodErrorMap = (iss) => {
  if (iss.input === undefined && (iss.code === 'invalid_type' || iss.code === 'invalid_value')) return 'is required';
  if (iss.code === 'invalid_type') {
    return `must be ${TYPE_NAMES[iss.expected] ?? iss.expected}`;
  }
  if (iss.code === 'invalid_value') return `must be ${iss.values.map((v) => String(v)).join(' or ')}`;
  if (iss.code === 'too_small' && iss.origin === 'string') return 'must not be empty';
  if (iss.code === 'too_small' && iss.origin === 'array') return `must have at least ${iss.minimum} item${iss.minimum === 1 ? '' : 's'}`;
  return undefined;
};

/** Flattens zod issues into manifest issues; `prefix` is prepended to every path. */
export function toManifestIssues(issues: readonly z.core.$ZodIssue[], prefix: readonly PropertyKey[] = []): ManifestIssue[] {
  const out: ManifestIssue[] = [];
  for (const issue of issues) {
    const path = [...prefix, ...issue.path];
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) out.push({ path: jsonPointer([...path, key]), message: 'is not an allowed key here' });
    } else if (issue.code === 'invalid_key') {
      out.push(...toManifestIssues(issue.issues, path));
    } else if (issue.code === 'invalid_union' && issue.errors.length > 0) {
      // When one branch matched the shape and failed deeper (a list with a bad item), its issues are the precise ones.
      const deeper = issue.errors.find((branch) => branch.length > 0 && branch.every((i) => i.path.length > 0));
      if (deeper) out.push(...toManifestIssues(deeper, path));
      else out.push({ path: jsonPointer(path), message: issue.message });
    } else {
      out.push({ path: jsonPointer(path), message: issue.message });
    }
  }
  return out;
}

/** Message of a zod issue relative to an entry: "field: message", or the message alone at the entry itself. */
export function relativeMessage(issue: ManifestIssue): string {
  return issue.path === '' ? issue.message : `${issue.path.slice(1)}: ${issue.message}`;
}
