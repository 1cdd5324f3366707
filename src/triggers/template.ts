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

function text(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** Renders `template` with `variables`; never throws, never leaves a placeholder. */
export function renderTemplate(template: string, variables: Record<string, unknown>): string {
  return template.replace(TAG, (_tag, inside: string) => {
    const path = inside.trim();
    return path ? text(lookup(variables, path)) : '';
  });
}
