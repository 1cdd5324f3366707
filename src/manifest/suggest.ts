// "Did you mean": SPEC §2.1 allows unknown keys in most objects, so a misspelled key
// (`default_agnet:`, `crn:`) is silently ignored and only the key it should have been is
// reported, as missing. Here an unknown key that looks like a known one of its object is named:
// in the message of the issue about that known key, else as a warning (docs/manifest.md).
import { jsonPointer, type ManifestIssue } from './issues.js';
import { isRecord } from './rules.js';
import { knownKeysAt } from './schema.js';
import { TRIGGER_ALIASES } from './trigger.js';

/** Edits (insert, delete, substitute, swap two neighbours) from `a` to `b`. Three rows of numbers, not a table of arrays. */
export function editDistance(a: string, b: string): number {
  let before = new Uint32Array(b.length + 1); // row i - 2
  let previous = Uint32Array.from({ length: b.length + 1 }, (_, j) => j); // row i - 1
  let current = new Uint32Array(b.length + 1);
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, before[j - 2]! + 1);
      current[j] = d;
    }
    [before, previous, current] = [previous, current, before];
  }
  return previous[b.length]!;
}

const squash = (key: string) => key.toLowerCase().replace(/[_-]/g, '');

/** The known key `unknown` most likely misspells, or null. */
export function closestKey(unknown: string, known: readonly string[]): string | null {
  if (known.includes(unknown)) return null;
  const squashed = squash(unknown);
  const same = known.find((k) => squash(k) === squashed); // defaultAgent, Default-Agent
  if (same) return same;
  const allowed = unknown.length <= 4 ? 1 : 2;
  const lower = unknown.toLowerCase();
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const key of known) {
    if (Math.abs(key.length - unknown.length) > allowed) continue; // the distance is at least the difference in length
    const distance = editDistance(lower, key.toLowerCase());
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

const unescapeSegment = (segment: string) => segment.replaceAll('~1', '/').replaceAll('~0', '~');

/**
 * The hints of one document, indexed by the unknown key's path and by its object's, so that each
 * issue finds its own in time of its depth: matching every issue with every hint was quadratic
 * (a 13 KB manifest of 1,000 misspelled triggers took seconds to check, in the API's merge gate).
 */
export class KeyHints {
  readonly all: KeyHint[];
  private readonly byPath = new Map<string, KeyHint>();
  private readonly byParent = new Map<string, KeyHint[]>();
  private readonly order = new Map<KeyHint, number>();

  constructor(document: unknown) {
    this.all = keyHints(document);
    this.all.forEach((hint, i) => {
      this.byPath.set(hint.path, hint);
      const parent = jsonPointer(hint.parent);
      const siblings = this.byParent.get(parent);
      if (siblings) siblings.push(hint);
      else this.byParent.set(parent, [hint]);
      this.order.set(hint, i);
    });
  }

  /** `issues` with their hints added; each hint used goes into `used`. */
  apply(issues: readonly ManifestIssue[], used = new Set<KeyHint>()): ManifestIssue[] {
    if (this.all.length === 0) return [...issues];
    return issues.map((issue) => {
      // an unknown key of a closed object is itself the issue
      const own = this.byPath.get(issue.path);
      if (own) {
        used.add(own);
        return { ...issue, message: `${issue.message}: did you mean ${own.suggestion}?` };
      }
      // the issue is about a missing (or wrong) known key whose misspelling is present in an object above it
      const segments = issue.path.split('/').slice(1);
      const related: KeyHint[] = [];
      let parent = '';
      for (const segment of segments) {
        const key = unescapeSegment(segment);
        for (const h of this.byParent.get(parent) ?? []) if (spellings(key).includes(h.suggestion)) related.push(h);
        parent = `${parent}/${segment}`;
      }
      if (related.length === 0) return issue;
      related.sort((a, b) => this.order.get(a)! - this.order.get(b)!);
      for (const h of related) used.add(h);
      return { ...issue, message: `${issue.message} (${related.map((h) => `unknown key ${h.unknown}: did you mean ${h.suggestion}?`).join('; ')})` };
    });
  }
}

/** Adds the hints of `document` to `issues`, and returns the rest as warnings. */
export function withKeyHints(issues: readonly ManifestIssue[], document: unknown): HintedIssues {
  const hints = new KeyHints(document);
  const used = new Set<KeyHint>();
  const hinted = hints.apply(issues, used);
  const warnings = hints.all.filter((h) => !used.has(h))
    .map((h) => ({ path: h.path, message: `unknown key: did you mean ${h.suggestion}? (unknown keys are allowed here and ignored)` }));
  return { issues: hinted, warnings };
}
