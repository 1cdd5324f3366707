// Equality of JSON values: the one helper for "did this change" (status gate, child specs); and
// the `error` of a JSON error answer.

/** Deep equality of JSON values; key order does not matter, undefined fields count as absent. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  }
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => jsonEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/** The `error` string of a JSON answer (`{ "error": "..." }`), or undefined: not JSON, or no such string. */
export function jsonErrorText(text: string): string | undefined {
  try {
    const error: unknown = (JSON.parse(text) as { error?: unknown } | null)?.error;
    return typeof error === 'string' ? error : undefined;
  } catch {
    return undefined;
  }
}
