// Text cut to a bound, marked with an ellipsis where it was cut: messages, names and errors that
// may carry what a sandbox, a repository or a client sent.

/** `text` when it has at most `max` characters, else its first `max - 1` and `…`. */
export function clipText(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
