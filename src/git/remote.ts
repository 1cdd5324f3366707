// Remote URL handling and credentials: the URL given to git never carries userinfo, and
// credentials reach git only through the environment of a credential helper (http) or an
// ssh command line naming a private temporary key file (ssh; docs/repositories.md).
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { InvalidRemoteError, LocalRepoNotAllowedError, UnreachableError, type UnreachableKind } from './errors.js';
import { redact } from './redact.js';
import { shellQuote } from '../lib/shell-quote.js';

/** HTTP(S) Basic credentials: a user name and a password or token. */
export interface BasicCredentials {
  username: string;
  password: string;
}

/** An SSH identity and the host keys it trusts (the only ones: strict host key checking). */
export interface SshCredentials {
  /** An OpenSSH or PEM private key, unencrypted. */
  sshPrivateKey: string;
  /** known_hosts lines (`ssh-keyscan` output, `[host]:port` for other ports). */
  knownHosts: string;
}

/** What a Project's credentials Secret gives git: Basic for http(s), a key for ssh. */
export type GitCredentials = BasicCredentials | SshCredentials;

export function isSshCredentials(credentials: GitCredentials): credentials is SshCredentials {
  return 'sshPrivateKey' in credentials;
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

/** An ssh:// URL or scp-like `user@host:path`. */
export function isSshUrl(url: string): boolean {
  return /^ssh:\/\//i.test(url) || SCP_LIKE.test(url);
}

/**
 * Accepts absolute local paths, file://, http(s):// and ssh remotes. Userinfo in an
 * http(s) URL is moved into the credentials (unless credentials are given explicitly). Basic
 * credentials go with http(s) URLs only, an SSH key with ssh URLs only.
 */
export function parseRemote(url: string, credentials?: GitCredentials | null, allowLocal = localReposAllowed()): Remote {
  if (/[\0\n\r]/.test(url)) throw new InvalidRemoteError(redact(url), 'contains a control character');
  const refusal = localRepoRefusal(url, allowLocal);
  if (refusal) throw refusal;
  if (credentials) assertCredentials(credentials);
  const scheme = SCHEME.exec(url)?.[1]?.toLowerCase();
  const ssh = isSshUrl(url);
  if (credentials && !isLocalRepoUrl(url)) {
    if (isSshCredentials(credentials) && !ssh) {
      throw new InvalidRemoteError(redact(url), 'the credentials Secret holds an SSH key (ssh-privatekey), which works only with an ssh:// or user@host:path URL; for http(s) give username and password (or token)');
    }
    if (!isSshCredentials(credentials) && ssh) {
      throw new InvalidRemoteError(redact(url), 'the credentials Secret holds a password or token, which works only with an http(s) URL; for ssh give ssh-privatekey and known_hosts');
    }
  }
  if (scheme) {
    let parsed: URL;
    try { parsed = new URL(url); } catch { throw new InvalidRemoteError(redact(url), 'not a URL'); }
    if (!['http', 'https', 'file', 'ssh', 'git'].includes(scheme)) throw new InvalidRemoteError(redact(url), `unsupported scheme ${scheme}`);
    // what ssh would read as an option (git refuses it too, later and less clearly)
    if (parsed.hostname.startsWith('-') || parsed.username.startsWith('-')) throw new InvalidRemoteError(redact(url), 'a host or user name cannot begin with "-"');
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
  if (ssh && /^-|@-/.test(url)) throw new InvalidRemoteError(redact(url), 'a host or user name cannot begin with "-"');
  if (url.startsWith('/') || ssh) return { url, displayUrl: url, credentials: credentials ?? null };
  throw new InvalidRemoteError(redact(url), 'expected an absolute path or a file://, http(s):// or ssh URL');
}

/** Why `url` cannot be a project's repository (parseRemote's reason, local repositories aside), or null. */
export function remoteProblem(url: string): string | null {
  try {
    parseRemote(url, null, true);
    return null;
  } catch (error) {
    if (error instanceof InvalidRemoteError) return error.message;
    throw error;
  }
}

function assertCredentials(credentials: GitCredentials): void {
  if (isSshCredentials(credentials)) {
    if (!credentials.sshPrivateKey.includes('PRIVATE KEY')) throw new InvalidRemoteError('(credentials)', 'ssh-privatekey is not a private key (expected an OpenSSH or PEM "-----BEGIN ... PRIVATE KEY-----" block)');
    if (!credentials.knownHosts.trim()) throw new InvalidRemoteError('(credentials)', 'known_hosts is empty: host keys are always checked');
    return;
  }
  // The credential protocol is line based: a newline would let a value inject fields.
  if (/[\0\n\r]/.test(credentials.username) || /[\0\n\r]/.test(credentials.password)) {
    throw new InvalidRemoteError('(credentials)', 'credentials contain a newline or NUL');
  }
}

// The helper reads the values from its environment; argv holds only this fixed script.
const CREDENTIAL_HELPER = '!f() { test "$1" = get || exit 0; printf "username=%s\\npassword=%s\\n" "$SVC_GIT_USERNAME" "$SVC_GIT_PASSWORD"; }; f';

/** Where an SSH invocation's private files are (written by withRemoteInvocation). */
export interface SshFiles { keyFile: string; knownHostsFile: string }

export interface RemoteInvocation { configArgs: string[]; env: Record<string, string>; secrets: string[] }

/**
 * The ssh command git runs: this key only, these host keys only, nothing of the machine's or the
 * user's (`-F /dev/null`: no ~/.ssh/config; no agent; no ~/.ssh/known_hosts; no prompt).
 */
export function sshCommand(files: SshFiles): string {
  return [
    'ssh', '-F', '/dev/null',
    '-o', 'IdentitiesOnly=yes', '-o', 'IdentityAgent=none', '-o', `IdentityFile=${shellQuote(files.keyFile)}`,
    '-o', 'StrictHostKeyChecking=yes', '-o', `UserKnownHostsFile=${shellQuote(files.knownHostsFile)}`, '-o', 'GlobalKnownHostsFile=/dev/null',
    '-o', 'UpdateHostKeys=no', '-o', 'CheckHostIP=no',
    '-o', 'BatchMode=yes', '-o', 'PasswordAuthentication=no', '-o', 'KbdInteractiveAuthentication=no', '-o', 'HostbasedAuthentication=no',
    '-o', 'ConnectTimeout=30',
  ].join(' ');
}

/**
 * `-c` options and environment for a command that talks to the remote. SSH credentials need
 * their files (`ssh`): use withRemoteInvocation, which writes and removes them.
 */
export function remoteInvocation(remote: Remote, ssh?: SshFiles): RemoteInvocation {
  // The empty value clears every configured helper, so nothing can store the password.
  const configArgs = ['-c', 'credential.helper='];
  if (!remote.credentials) return { configArgs, env: {}, secrets: [] };
  if (isSshCredentials(remote.credentials)) {
    if (!ssh) throw new Error('remoteInvocation: SSH credentials need their key files (use withRemoteInvocation)');
    return { configArgs, env: { GIT_SSH_COMMAND: sshCommand(ssh), GIT_SSH_VARIANT: 'ssh' }, secrets: [] };
  }
  const { username, password } = remote.credentials;
  return {
    configArgs: [...configArgs, '-c', `credential.helper=${CREDENTIAL_HELPER}`],
    env: { SVC_GIT_USERNAME: username, SVC_GIT_PASSWORD: password },
    // The password always; a short username would garble messages and is not secret.
    secrets: [password, ...(username.length >= 4 ? [username] : [])],
  };
}

/**
 * Runs `fn` with the remote's invocation. For SSH credentials the key and known_hosts are
 * written to a new private directory (0700, files 0600) first and removed when `fn` settles.
 */
export async function withRemoteInvocation<T>(remote: Remote, fn: (invocation: RemoteInvocation) => Promise<T>): Promise<T> {
  const credentials = remote.credentials;
  if (!credentials && isSshUrl(remote.url)) {
    // never the machine's ~/.ssh or ssh agent: a Project reaches an ssh host only with its own key
    throw new InvalidRemoteError(remote.displayUrl, 'an ssh URL needs a credentials Secret with ssh-privatekey and known_hosts (svc never uses the keys, agent or known_hosts of the machine it runs on)');
  }
  if (!credentials || !isSshCredentials(credentials)) return fn(remoteInvocation(remote));
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-ssh-'));
  try {
    await chmod(dir, 0o700);
    const files = { keyFile: path.join(dir, 'key'), knownHostsFile: path.join(dir, 'known_hosts') };
    // OpenSSH refuses a key without its final newline; a Secret pasted on Windows has CRLF
    const key = credentials.sshPrivateKey.replace(/\r\n/g, '\n').trimEnd() + '\n';
    await writeFile(files.keyFile, key, { mode: 0o600 });
    await writeFile(files.knownHostsFile, credentials.knownHosts.replace(/\r\n/g, '\n').trimEnd() + '\n', { mode: 0o600 });
    return await fn(remoteInvocation(remote, files));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
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
  /host key verification failed/i,
  /permission denied/i,
  /connection timed out/i,
  /no route to host/i,
];

/** What a failure's stderr says about why, most specific first (git's own words stay in the message). */
const CAUSES: { kind: UnreachableKind; pattern: RegExp; hint?: string }[] = [
  { kind: 'HostKeyVerificationFailed', pattern: /host key verification failed|remote host identification has changed|no \S+ host key is known/i,
    hint: "the host's SSH key is not one of the known_hosts of the credentials Secret" },
  { kind: 'AuthenticationFailed', pattern: /permission denied \(|authentication failed|could not read username|load key .*: (invalid format|error in libcrypto)|returned error: 40[13]/i,
    hint: 'the host refused the credentials' },
  { kind: 'RepositoryNotFound', pattern: /does not appear to be a git repository|repository .*not found|not found|returned error: 404/i },
  { kind: 'HostUnreachable', pattern: /could not resolve host(name)?|connection refused|connection timed out|no route to host|network is unreachable|failed to connect/i },
];

/** Lines git and ssh add around a remote failure, which say nothing of its cause (ssh's host key banner too). */
const BOILERPLATE = [
  /^fatal: could not read from remote repository\.?$/i,
  /^please make sure you have the correct access rights$/i,
  /^and the repository exists\.?$/i,
  /^warning: permanently added/i,
  /^@/,
  /^(it is possible that someone|someone could be eavesdropping|it is also possible that a host key|please contact your system administrator|add correct host key in|offending .* key in|remove with:|ssh-keygen -f|(.* )?host key for .* has changed and you have requested strict checking)/i,
];

/** The stderr lines that say what went wrong, `fatal: ` and `remote: ` prefixes dropped; the one matching `first` leads. */
function causeLines(stderr: string, first?: RegExp): string[] {
  const text = stderr.replace(/The fingerprint for the (\S+) key sent by the remote host is\s*\n\s*(\S+?)\.?\s*$/im, 'the host sent the $1 key $2');
  const lines = text.split('\n').map((l) => l.trim()).filter((l) => l && !BOILERPLATE.some((b) => b.test(l)));
  const unique = [...new Set(lines.map((l) => l.replace(/^(fatal|error|remote):\s*/i, '').replace(/\.$/, '')).filter(Boolean))];
  const lead = first ? unique.findIndex((l) => first.test(l)) : -1;
  return lead > 0 ? [unique[lead]!, ...unique.filter((_, i) => i !== lead)] : unique;
}

/** Turns a failed fetch/push stderr into UnreachableError when it says the remote is out of reach. */
export function unreachableFrom(stderr: string, remote: Remote): UnreachableError | null {
  if (!UNREACHABLE_PATTERNS.some((pattern) => pattern.test(stderr))) return null;
  const cause = CAUSES.find((c) => c.pattern.test(stderr));
  const lines = causeLines(stderr, cause?.pattern).slice(0, 3);
  const detail = lines.join('; ') || 'no message';
  return new UnreachableError(remote.displayUrl, cause?.hint ? `${detail} (${cause.hint})` : detail, cause?.kind ?? 'Unreachable');
}
