// Text -> document for both encodings. A syntax error is one issue with its line and column.
import { LineCounter, isCollection, isMap, isPair, isScalar, parseDocument } from 'yaml';
import TOML from '@iarna/toml';
import type { ManifestIssue } from './issues.js';

export const MANIFEST_FILES = ['svc.yaml', 'svc.toml'] as const;
export type ManifestFileName = (typeof MANIFEST_FILES)[number];
export type Encoding = 'yaml' | 'toml';

export function encodingOf(file: string): Encoding | undefined {
  if (/\.ya?ml$/i.test(file)) return 'yaml';
  if (/\.toml$/i.test(file)) return 'toml';
  return undefined;
}

export type ParseResult = { ok: true; document: unknown } | { ok: false; issue: ManifestIssue };

const syntaxIssue = (kind: string, line: number, column: number, what: string): ParseResult => ({
  ok: false,
  issue: { path: '', message: `${kind} syntax error at line ${line}, column ${column}: ${what}` },
});

export function parseManifestText(encoding: Encoding, text: string): ParseResult {
  return encoding === 'yaml' ? parseYaml(text) : parseToml(text);
}

export function parseYaml(text: string): ParseResult {
  const lineCounter = new LineCounter();
  // Duplicate keys are found by firstDuplicateKey: yaml's own check (uniqueKeys) compares each key
  // with every key before it, and a map of 60,000 keys took minutes.
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: false, lineCounter });
  const duplicate = firstDuplicateKey(doc.contents);
  const error = doc.errors[0];
  if (duplicate !== undefined && (!error || duplicate < error.pos[0])) {
    const { line, col } = lineCounter.linePos(duplicate);
    return syntaxIssue('YAML', line, col, 'Map keys must be unique');
  }
  if (error) {
    const [line, column] = error.linePos ? [error.linePos[0].line, error.linePos[0].col] : [1, 1];
    return syntaxIssue('YAML', line, column, firstSentence(error.message));
  }
  return { ok: true, document: doc.toJS() };
}

/**
 * The offset of the first key that repeats an earlier key of its map, as yaml's uniqueKeys decides
 * (scalar keys with the same value; other keys are never equal), in one pass over the nodes.
 */
export function firstDuplicateKey(root: unknown): number | undefined {
  let first: number | undefined;
  const stack: unknown[] = [root];
  while (stack.length) {
    const node = stack.pop();
    if (!isCollection(node)) continue;
    const seen = isMap(node) ? new Set<unknown>() : undefined;
    for (const item of node.items) {
      if (!isPair(item)) { stack.push(item); continue; }
      const { key } = item;
      if (seen && isScalar(key) && !Number.isNaN(key.value)) {
        if (seen.has(key.value) && key.range && (first === undefined || key.range[0] < first)) first = key.range[0];
        seen.add(key.value);
      }
      stack.push(key, item.value);
    }
  }
  return first;
}

const SINGLE_TRIGGERS_TABLE = /^[ \t]*\[[ \t]*triggers[ \t]*\][ \t]*(#.*)?$/m;

function parseToml(text: string): ParseResult {
  const single = SINGLE_TRIGGERS_TABLE.exec(text);
  if (single) {
    const line = text.slice(0, single.index).split('\n').length;
    return {
      ok: false,
      issue: {
        path: '/triggers',
        message: `line ${line}: [triggers] declares one table; write each trigger as an array-of-tables entry, [[triggers]] (double brackets)`,
      },
    };
  }
  try {
    return { ok: true, document: tomlDatesToStrings(TOML.parse(text)) };
  } catch (err) {
    const e = err as Error & { line?: number; col?: number };
    return syntaxIssue('TOML', (e.line ?? 0) + 1, (e.col ?? 0) + 1, firstSentence(e.message));
  }
}

function firstSentence(message: string): string {
  return message.split('\n')[0]!.replace(/ at (line|row) \d+, col(umn)? \d+.*$/, '');
}

/** TOML date-times become ISO 8601 strings as written in YAML (local ones keep no offset). */
function tomlDatesToStrings(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(tomlDatesToStrings);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, tomlDatesToStrings(v)]));
  }
  return value;
}
