// Text cut to a bound, marked with an ellipsis where it was cut: messages, names and errors that
// may carry what a sandbox, a repository or a client sent.

/** `text` when it has at most `max` characters, else its first `max - 1` and `…`. */
export function clipText(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * The first `limit` of `items` joined, then how many more of `total` there are ("a, b and 3 more"):
 * a message that names what a list holds without growing with it.
 */
export function firstAndMore(items: readonly string[], limit: number, total = items.length, separator = ', '): string {
  const named = items.slice(0, limit).join(separator);
  return total > limit ? `${named}${separator}and ${total - limit} more` : named;
}
