/**
 * `text` without its trailing slashes. A loop, not `/\/+$/`: that expression tries every run of
 * slashes to the end, quadratic in a path of many slashes (20,000 took two seconds).
 */
export function withoutTrailingSlashes(text: string): string {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 47 /* / */) end--;
  return text.slice(0, end);
}
