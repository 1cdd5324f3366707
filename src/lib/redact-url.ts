// Credentials in URLs (userinfo, `?private_token=`, `?token=`...) never reach a message, a log,
// a status or a REST answer: every place that shows a URL or an error text passes it here.

// Both scans are linear in the text, which may be long and anyone's (git's stderr, a sandbox's
// log): a regex that tries a scheme or a parameter name at every position was quadratic (32,000
// letters took seconds of the process's one thread).
// Query parameters hosts use for credentials (GitLab private_token, GitHub access_token, S3 and
// Azure signatures, ...): any name containing one of these words.
const CREDENTIAL_PARAM = /token|secret|passw|pwd|auth|key|sig|credential|session|code/i;
// A name may end in `?` or `;` but not run on past one: it cannot scan all of `;a;a;a...` for its `=`.
const QUERY_PARAM = /([?&;])([^=&#\s'"?;]+[?;]*)=([^&#\s'"]*)/g;
const SCHEME_CHAR = /[a-z0-9+.-]/i;
const LETTER = /[a-z]/i;
const USERINFO_END = /[/@\s?#]/;

/** Replaces `scheme://user:pass@` with `scheme://***@` and credential-like query values with `***`, anywhere in `text`. */
export function redactUrls(text: string): string {
  return withoutUserinfo(text).replace(QUERY_PARAM, (all: string, sep: string, name: string, value: string) =>
    CREDENTIAL_PARAM.test(name) && value !== '' ? `${sep}${name}=***` : all);
}

/**
 * `text` with each `scheme://userinfo@` as `scheme://<replacement>`. Found from each `://`: back
 * over the scheme (to its first letter), forward to the `@` before any `/`, whitespace, `?` or `#`.
 * Each step stops at the next `://` or the one before (both hold a `/`), so the whole is linear.
 */
function withoutUserinfo(text: string, replacement = '***@'): string {
  let out = '';
  let done = 0; // what comes before is in `out`
  for (let at = text.indexOf('://'); at >= 0; at = text.indexOf('://', at + 1)) {
    let start = at;
    while (start > done && SCHEME_CHAR.test(text[start - 1]!)) start--;
    while (start < at && !LETTER.test(text[start]!)) start++;
    if (start === at) continue; // no scheme
    let end = at + 3;
    while (end < text.length && !USERINFO_END.test(text[end]!)) end++;
    if (text[end] !== '@') continue;
    out += `${text.slice(done, at + 3)}${replacement}`;
    done = end + 1;
    at = end;
  }
  return out + text.slice(done);
}

/**
 * Whether `url` carries a credential: a password, any userinfo on http(s) (a token as user
 * name), or a credential-like query parameter. `git@host:repo` and `ssh://git@host/...` do not.
 */
export function urlCarriesCredential(url: string): boolean {
  const withoutAnyUserinfo = withoutUserinfo(url, '');
  if (redactUrls(withoutAnyUserinfo) !== withoutAnyUserinfo) return true;
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url)?.[1]?.toLowerCase();
  if (!scheme) return false;
  let parsed: URL;
  try { parsed = new URL(url); } catch { return false; }
  if (parsed.password) return true;
  return (scheme === 'http' || scheme === 'https') && parsed.username !== '';
}
