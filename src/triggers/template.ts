// Prompt templates (SPEC §6): mustache-style `{{ token.dotted.path }}` (spaces allowed inside the
// braces). A prompt is not HTML: values are never escaped. A missing value renders empty, objects
// and arrays render as JSON. Sections, partials and the like are not supported: such a tag names
// no variable and renders empty.

// The path is trimmed after the match: spaces matched by `\s*` on both sides of a lazy capture
// made the expression cubic in a run of spaces (`{{` and 4,000 spaces took over 20 s).
const TAG = /\{\{\{?([^{}]*)\}?\}\}/g;

/** The value at `path` (dot separated) in `variables`, or undefined. Own properties only. */
export function lookup(variables: unknown, path: string): unknown {
  let value: unknown = variables;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object' || !Object.prototype.hasOwnProperty.call(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

function textOf(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** The paths the tags of `template` name, in order, trimmed (an empty one for `{{ }}` or a section's `{{#x}}`'s `#x`). */
export function templatePaths(template: string): string[] {
  return [...template.matchAll(TAG)].map((match) => match[1]!.trim());
}

/** Renders `template` with `variables`; never throws, never leaves a placeholder. */
export function renderTemplate(template: string, variables: Record<string, unknown>): string {
  return renderPrefix(template, variables, Number.POSITIVE_INFINITY).text;
}

/**
 * The start of `template` rendered with `variables`, enough of it for `maxBytes` (all of it when it
 * is smaller), and the size of the whole rendering in bytes. Each distinct value becomes text once,
 * and past `maxBytes` pieces are only counted: a payload of 1 MiB in 200 tags was 200 MiB of prompt
 * (5 s) to keep 64 KiB of it, and in 600 tags more than a string may hold (it threw).
 */
export function renderPrefix(template: string, variables: Record<string, unknown>, maxBytes: number): { text: string; bytes: number } {
  const values = new Map<string, { text: string; bytes: number }>();
  let text = '';
  let kept = 0;
  let bytes = 0;
  const add = (piece: string, size = Buffer.byteLength(piece)) => {
    bytes += size;
    if (kept >= maxBytes) return;
    text += piece;
    kept += size;
  };
  let from = 0;
  for (const match of template.matchAll(TAG)) {
    add(template.slice(from, match.index));
    from = match.index + match[0].length;
    const path = match[1]!.trim();
    if (!path) continue;
    let value = values.get(path);
    if (!value) {
      const rendered = textOf(lookup(variables, path));
      value = { text: rendered, bytes: Buffer.byteLength(rendered) };
      values.set(path, value);
    }
    add(value.text, value.bytes);
  }
  add(template.slice(from));
  return { text, bytes };
}
