// Credentials in URLs (userinfo, `?private_token=`, `?token=`...) never reach a message, a log,
// a status or a REST answer: every place that shows a URL or an error text passes it here.

const USERINFO = /([a-z][a-z0-9+.-]*:\/\/)[^/@\s?#]*@/gi;
// Query parameters hosts use for credentials (GitLab private_token, GitHub access_token, S3 and
// Azure signatures, ...): any name containing one of these words.
const CREDENTIAL_PARAM = /token|secret|passw|pwd|auth|key|sig|credential|session|code/i;
const QUERY_PARAM = /([?&;])([^=&#\s'"]+)=([^&#\s'"]*)/g;

/** Replaces `scheme://user:pass@` with `scheme://***@` and credential-like query values with `***`, anywhere in `text`. */
export function redactUrls(text: string): string {
  return text
    .replace(USERINFO, '$1***@')
    .replace(QUERY_PARAM, (all: string, sep: string, name: string, value: string) =>
      CREDENTIAL_PARAM.test(name) && value !== '' ? `${sep}${name}=***` : all);
}

/**
 * Whether `url` carries a credential: a password, any userinfo on http(s) (a token as user
 * name), or a credential-like query parameter. `git@host:repo` and `ssh://git@host/...` do not.
 */
export function urlCarriesCredential(url: string): boolean {
  if (redactUrls(url.replace(USERINFO, '$1')) !== url.replace(USERINFO, '$1')) return true;
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url)?.[1]?.toLowerCase();
  if (!scheme) return false;
  let parsed: URL;
  try { parsed = new URL(url); } catch { return false; }
  if (parsed.password) return true;
  return (scheme === 'http' || scheme === 'https') && parsed.username !== '';
}
