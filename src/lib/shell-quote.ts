// A word for sh: single-quoted, a quote inside written as '\''. For commands and files a shell
// reads (git's ssh command and credential helper, `DIR/env`, launch scripts).

export function shellQuote(word: string): string {
  return `'${word.replaceAll("'", "'\\''")}'`;
}

/** The words of shellQuote's output (and of words joined to it) back: what sh makes of `'a'\''b'`. */
export function shellUnquote(text: string): string | null {
  if (!/^(?:'[^']*'|\\')+$/.test(text)) return null;
  return [...text.matchAll(/'([^']*)'|\\(')/g)].map((m) => m[1] ?? m[2]).join('');
}
