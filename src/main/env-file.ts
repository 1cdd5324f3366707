// `DIR/env`, the file `source DIR/env` reads: `export NAME='value'` lines, each value quoted for sh
// (a data directory's path may hold a space or a quote), and read back by the next svc dev.
import { shellQuote, shellUnquote } from '../lib/shell-quote.js';

/** `export NAME='value'` lines. */
export function envFileText(values: Record<string, string>): string {
  return `${Object.entries(values).map(([k, v]) => `export ${k}=${shellQuote(v)}`).join('\n')}\n`;
}

/** The values of envFileText's lines (any other line is skipped). */
export function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^export ([A-Z_][A-Z0-9_]*)=(.+)$/.exec(line.trim());
    const value = m ? shellUnquote(m[2]!) : null;
    if (value !== null) out[m![1]!] = value;
  }
  return out;
}
