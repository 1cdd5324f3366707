// "Did you mean": SPEC §2.1 allows unknown keys in most objects, so a misspelled key
// (`default_agnet:`, `crn:`) is silently ignored and only the key it should have been is
// reported, as missing. Here an unknown key that looks like a known one of its object is named:
// in the message of the issue about that known key, else as a warning (docs/manifest.md).
import { jsonPointer, type ManifestIssue } from './issues.js';
import { isRecord } from './rules.js';
import { knownKeysAt } from './schema.js';
import { TRIGGER_ALIASES } from './trigger.js';

/** Edits (insert, delete, substitute, swap two neighbours) from `a` to `b`. */
export function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

const squash = (key: string) => key.toLowerCase().replace(/[_-]/g, '');

/** The known key `unknown` most likely misspells, or null. */
export function closestKey(unknown: string, known: readonly string[]): string | null {
  if (known.includes(unknown)) return null;
  const same = known.find((k) => squash(k) === squash(unknown)); // defaultAgent, Default-Agent
  if (same) return same;
  const allowed = unknown.length <= 4 ? 1 : 2;
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const key of known) {
    const distance = editDistance(unknown.toLowerCase(), key.toLowerCase());
    if (distance <= allowed && distance < bestDistance) { best = key; bestDistance = distance; }
  }
  return best;
}

export interface KeyHint {
  /** JSON pointer of the unknown key. */
  path: string;
  /** Path segments of the object holding it. */
  parent: readonly PropertyKey[];
  unknown: string;
  suggestion: string;
}

/** Every unknown key of the described objects that looks like a known key of the same object. */
export function keyHints(document: unknown): KeyHint[] {
  if (!isRecord(document)) return [];
  const version = document.svc_version === 1 || document.svc_version === 2 ? document.svc_version : null;
  const hints: KeyHint[] = [];
  const visit = (object: unknown, parent: PropertyKey[]) => {
    if (!isRecord(object)) return;
    const known = knownKeysAt(parent, version);
    if (!known) return;
    for (const key of Object.keys(object)) {
      const suggestion = closestKey(key, known);
      if (suggestion) hints.push({ path: jsonPointer([...parent, key]), parent, unknown: key, suggestion });
    }
  };
  visit(document, []);
  for (const section of ['project', 'env', 'engine', 'sandbox']) visit(document[section], [section]);
  for (const section of ['triggers', 'connectors', 'apps', 'channels']) {
    const list = document[section];
    if (Array.isArray(list)) list.forEach((entry, i) => visit(entry, [section, i]));
  }
  if (isRecord(document.agents)) for (const name of Object.keys(document.agents)) visit(document.agents[name], ['agents', name]);
  if (Array.isArray(document.agents)) document.agents.forEach((entry, i) => visit(entry, ['agents', i]));
  return hints;
}

/** The spellings of one field: itself and its trigger alias (either way round). */
function spellings(key: string): string[] {
  const pairs = Object.entries(TRIGGER_ALIASES) as [string, string][];
  const pair = pairs.find(([field, alias]) => field === key || alias === key);
  return pair ? [...pair] : [key];
}

export interface HintedIssues {
  /** The issues, with "did you mean" added to those about a key an unknown key misspells. */
  issues: ManifestIssue[];
  /** The hints no issue mentions: unknown keys (allowed, so not errors) that look misspelled. */
  warnings: ManifestIssue[];
}

/** Adds the hints of `document` to `issues`, and returns the rest as warnings. */
export function withKeyHints(issues: readonly ManifestIssue[], document: unknown): HintedIssues {
  const hints = keyHints(document);
  const used = new Set<KeyHint>();
  const hinted = issues.map((issue) => {
    // an unknown key of a closed object is itself the issue
    const own = hints.find((h) => h.path === issue.path);
    if (own) {
      used.add(own);
      return { ...issue, message: `${issue.message}: did you mean ${own.suggestion}?` };
    }
    // the issue is about a missing (or wrong) known key whose misspelling is present
    const related = hints.filter((h) => {
      const parent = jsonPointer(h.parent);
      if (!issue.path.startsWith(`${parent}/`)) return false;
      const key = issue.path.slice(parent.length + 1).split('/')[0]!.replaceAll('~1', '/').replaceAll('~0', '~');
      return spellings(key).includes(h.suggestion);
    });
    if (related.length === 0) return issue;
    for (const h of related) used.add(h);
    return { ...issue, message: `${issue.message} (${related.map((h) => `unknown key ${h.unknown}: did you mean ${h.suggestion}?`).join('; ')})` };
  });
  const warnings = hints.filter((h) => !used.has(h))
    .map((h) => ({ path: h.path, message: `unknown key: did you mean ${h.suggestion}? (unknown keys are allowed here and ignored)` }));
  return { issues: hinted, warnings };
}
