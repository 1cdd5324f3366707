// Remote URL handling and credentials: the URL given to git never carries userinfo, and
// credentials reach git only through the environment of a credential helper.
import { InvalidRemoteError, LocalRepoNotAllowedError, UnreachableError } from './errors.js';
import { redact } from './redact.js';

export interface GitCredentials {
  username: string;
  password: string;
}

export interface Remote {
  /** What git is given: no userinfo. */
  url: string;
  /** What messages show. */
  displayUrl: string;
  credentials: GitCredentials | null;
}

const SCHEME = /^([a-z][a-z0-9+.-]*):\/\//i;

/** A repository on this machine's filesystem: an absolute path or a file:// URL. */
export function isLocalRepoUrl(url: string): boolean {
  return url.startsWith('/') || /^file:/i.test(url);
}

/**
 * Whether local repositories may be used: only where the process was started with
 * SVC_ALLOW_LOCAL_REPOS=1 (`svc dev` sets it). In a deployment a write token must not be able to
 * read any git directory of the API's or the operator's host.
 */
export function localReposAllowed(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.SVC_ALLOW_LOCAL_REPOS?.trim() === '1';
}

/** The refusal of `url` when it is local and local repositories are not allowed; else null. */
export function localRepoRefusal(url: string, allowLocal = localReposAllowed()): LocalRepoNotAllowedError | null {
  return !allowLocal && isLocalRepoUrl(url) ? new LocalRepoNotAllowedError(redact(url)) : null;
}
const SCP_LIKE = /^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:/;

/**
 * Accepts absolute local paths, file://, http(s):// and ssh remotes. Userinfo in an
 * http(s) URL is moved into the credentials (unless credentials are given explicitly).
 */
export function parseRemote(url: string, credentials?: GitCredentials | null, allowLocal = localReposAllowed()): Remote {
  if (/[\0\n\r]/.test(url)) throw new InvalidRemoteError(redact(url), 'contains a control character');
  const refusal = localRepoRefusal(url, allowLocal);
  if (refusal) throw refusal;
  if (credentials) assertCredentials(credentials);
  const scheme = SCHEME.exec(url)?.[1]?.toLowerCase();
  if (scheme) {
    let parsed: URL;
    try { parsed = new URL(url); } catch { throw new InvalidRemoteError(redact(url), 'not a URL'); }
    if (!['http', 'https', 'file', 'ssh', 'git'].includes(scheme)) throw new InvalidRemoteError(redact(url), `unsupported scheme ${scheme}`);
    let fromUrl: GitCredentials | null = null;
    const http = scheme === 'http' || scheme === 'https';
    // Elsewhere a password would end up in git's argv: only http(s) can take it out of the URL.
    if (parsed.password && !http) throw new InvalidRemoteError(redact(url), `a password in a ${scheme} URL is not supported`);
    if ((parsed.username || parsed.password) && http) {
      try {
        fromUrl = { username: decodeURIComponent(parsed.username), password: decodeURIComponent(parsed.password) };
      } catch {
        throw new InvalidRemoteError(redact(url), 'malformed percent-encoding in the userinfo');
      }
      assertCredentials(fromUrl);
      parsed.username = '';
      parsed.password = '';
    }
    const clean = fromUrl ? parsed.toString() : url;
    return { url: clean, displayUrl: redact(clean), credentials: credentials ?? fromUrl };
  }
  if (url.startsWith('/') || SCP_LIKE.test(url)) return { url, displayUrl: url, credentials: credentials ?? null };
  throw new InvalidRemoteError(redact(url), 'expected an absolute path or a file://, http(s):// or ssh URL');
}

function assertCredentials(credentials: GitCredentials): void {
  // The credential protocol is line based: a newline would let a value inject fields.
  if (/[\0\n\r]/.test(credentials.username) || /[\0\n\r]/.test(credentials.password)) {
    throw new InvalidRemoteError('(credentials)', 'credentials contain a newline or NUL');
  }
}

// The helper reads the values from its environment; argv holds only this fixed script.
const CREDENTIAL_HELPER = '!f() { test "$1" = get || exit 0; printf "username=%s\\npassword=%s\\n" "$SVC_GIT_USERNAME" "$SVC_GIT_PASSWORD"; }; f';

/** `-c` options and environment for a command that talks to the remote. */
export function remoteInvocation(remote: Remote): { configArgs: string[]; env: Record<string, string>; secrets: string[] } {
  // The empty value clears every configured helper, so nothing can store the password.
  const configArgs = ['-c', 'credential.helper='];
  if (!remote.credentials) return { configArgs, env: {}, secrets: [] };
  const { username, password } = remote.credentials;
  return {
    configArgs: [...configArgs, '-c', `credential.helper=${CREDENTIAL_HELPER}`],
    env: { SVC_GIT_USERNAME: username, SVC_GIT_PASSWORD: password },
    // The password always; a short username would garble messages and is not secret.
    secrets: [password, ...(username.length >= 4 ? [username] : [])],
  };
}

const UNREACHABLE_PATTERNS = [
  /unable to access/i,
  /could not read from remote/i,
  /does not appear to be a git repository/i,
  /authentication failed/i,
  /could not read username/i,
  /connection refused/i,
  /could not resolve host/i,
  /repository .* not found/i,
  /not found/i,
  /the requested url returned error/i,
];

/** Turns a failed fetch/push stderr into UnreachableError when it says the remote is out of reach. */
export function unreachableFrom(stderr: string, remote: Remote): UnreachableError | null {
  if (!UNREACHABLE_PATTERNS.some((pattern) => pattern.test(stderr))) return null;
  const line = stderr.split('\n').map((l) => l.trim()).find((l) => l.startsWith('fatal:')) ?? stderr.trim().split('\n')[0] ?? '';
  return new UnreachableError(remote.displayUrl, line.replace(/^fatal:\s*/, '') || 'no message');
}
