// Git credentials for the session repository. git asks a credential helper (credential-helper.ts),
// which asks this broker over a unix socket only the sandbox can reach; the broker fetches a
// short-lived credential from the API (SPEC §4.4) and refetches it once expired. The credential
// never lands in the remote URL, a file, argv or a log.
import { createHash } from 'node:crypto';
import net from 'node:net';
import { rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cloneCredentialExpired, parseCloneCredential, type CloneCredential } from '../src/lib/git-credential.js';
import { httpCall } from '../src/lib/http-call.js';
import { makeDirs } from '../src/lib/make-dirs.js';
import { shellQuote } from '../src/lib/shell-quote.js';

export interface CredentialSource {
  apiUrl: string;
  projectId: string;
  sandboxToken: string;
  /** the repository URL whose protocol and host the credential is for */
  repoUrl: string;
}

/** Parses git's credential protocol (key=value lines). */
export function parseCredentialRequest(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of text.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) fields.set(line.slice(0, eq), line.slice(eq + 1));
  }
  return fields;
}

const FETCH_TIMEOUT_MS = 15_000;

/** The longest unix socket path (sun_path is 108 bytes with its NUL). */
export const MAX_SOCKET_PATH = 107;

/**
 * `wanted`, or a short path in the temp dir when `wanted` is too long for a unix socket (a long
 * data directory): named by a hash of `wanted`, so that every sandbox on a machine has its own.
 */
export function socketPathFor(wanted: string): string {
  if (Buffer.byteLength(wanted) <= MAX_SOCKET_PATH) return wanted;
  const id = createHash('sha256').update(wanted).digest('hex').slice(0, 16);
  return path.join(os.tmpdir(), `svc-agent-${id}`, path.basename(wanted).slice(0, 32));
}

export class CredentialBroker {
  private cached: CloneCredential | null = null;
  private inflight: Promise<CloneCredential> | null = null;
  private server: net.Server | null = null;
  private readonly repo: URL;
  private readonly socketPath: string;
  /** how many times a credential was fetched from the API (shown in health as a counter) */
  fetches = 0;
  /**
   * The last fetch that failed (epoch ms, what was said): git only says it could not read a
   * username, so the start tells from this whether the API was away or refused.
   */
  lastFailure: { at: number; message: string } | null = null;

  constructor(private readonly source: CredentialSource, socketPath: string) {
    this.repo = new URL(source.repoUrl);
    this.socketPath = socketPathFor(socketPath);
  }

  /**
   * The value for git's `credential.helper`: runs the helper with this broker's socket for `get`
   * and `erase`. git also says `store` after every authenticated push or fetch; the broker keeps
   * the credential itself, so that answer costs a shell, not a node process.
   */
  helperCommand(): string {
    const helper = fileURLToPath(new URL('./credential-helper.js', import.meta.url));
    const run = `${shellQuote(process.execPath)} ${shellQuote(helper)} ${shellQuote(this.socketPath)}`;
    return `!f() { case "$1" in get|erase) exec ${run} "$1";; esac; }; f`;
  }

  async listen(): Promise<void> {
    const dir = path.dirname(this.socketPath);
    makeDirs(dir, 0o700);
    // a folder someone else made (in a shared temp dir) could hand the credential to them
    const stat = statSync(dir);
    if (stat.uid !== process.getuid?.() || (stat.mode & 0o077) !== 0) throw new Error(`the credential socket's folder ${dir} is not this sandbox's own (owner ${stat.uid}, mode ${(stat.mode & 0o777).toString(8)})`);
    rmSync(this.socketPath, { force: true });
    // half-open: git's request ends with the client's end of the stream, the answer follows
    this.server = net.createServer({ allowHalfOpen: true }, (socket) => this.serve(socket));
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(this.socketPath, () => resolve());
    });
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    rmSync(this.socketPath, { force: true });
    // the short fallback's own folder goes too
    if (path.dirname(this.socketPath).startsWith(path.join(os.tmpdir(), 'svc-agent-'))) rmSync(path.dirname(this.socketPath), { recursive: true, force: true });
  }

  /** The cached credential while it is good, else null (never fetches). */
  cachedCredential(): CloneCredential | null {
    return this.cached && !cloneCredentialExpired(this.cached) ? this.cached : null;
  }

  /**
   * The cached credential as git configuration in environment variables (http.extraHeader), for
   * the daemon's own clone and fetch at boot: git then meets no 401 and asks no helper (a process
   * each time). Only in that git's environment: never a file, argv or a log. Empty without one.
   */
  gitAuthEnv(): Record<string, string> {
    const credential = this.cachedCredential();
    if (!credential) return {};
    const basic = Buffer.from(`${credential.username}:${credential.password}`).toString('base64');
    return { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'http.extraHeader', GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}` };
  }

  /** A valid credential, fetched from the API when none is cached or the cached one expired. */
  async credential(): Promise<CloneCredential> {
    if (this.cached && !cloneCredentialExpired(this.cached)) return this.cached;
    this.inflight ??= this.fetch().finally(() => { this.inflight = null; });
    return this.inflight;
  }

  private async fetch(): Promise<CloneCredential> {
    const url = `${this.source.apiUrl}/projects/${encodeURIComponent(this.source.projectId)}/git/clone-credential`;
    try {
      // git waits for the answer: an API that does not answer must not hold it forever
      const res = await httpCall(url, { headers: { authorization: `Bearer ${this.source.sandboxToken}`, accept: 'application/json' }, timeoutMs: FETCH_TIMEOUT_MS });
      if (res.status !== 200) throw new Error(`answered ${res.status}`);
      let body: unknown = null;
      try { body = JSON.parse(res.body); } catch { /* parseCloneCredential says what is wrong */ }
      const credential = parseCloneCredential(body);
      this.fetches++;
      this.cached = credential;
      return credential;
    } catch (err) {
      const message = `clone credential: GET ${url}: ${(err as Error).message}`;
      this.lastFailure = { at: Date.now(), message };
      throw new Error(message);
    }
  }

  private matchesRepo(fields: Map<string, string>): boolean {
    const protocol = this.repo.protocol.replace(/:$/, '');
    return fields.get('protocol') === protocol && fields.get('host') === this.repo.host;
  }

  private serve(socket: net.Socket): void {
    let input = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => {
      input += chunk;
      if (input.length > 64 * 1024) socket.destroy();
    });
    socket.on('error', () => socket.destroy());
    socket.on('end', () => {
      const newline = input.indexOf('\n');
      const operation = input.slice(0, newline);
      const fields = parseCredentialRequest(input.slice(newline + 1));
      void this.answer(operation, fields).then((reply) => socket.end(reply), () => socket.end(''));
    });
  }

  private async answer(operation: string, fields: Map<string, string>): Promise<string> {
    if (!this.matchesRepo(fields)) return '';
    if (operation === 'erase') {
      // git says the credential was rejected: forget it so the next request fetches a new one
      this.cached = null;
      return '';
    }
    if (operation !== 'get') return '';
    try {
      const c = await this.credential();
      return `username=${c.username}\npassword=${c.password}\n`;
    } catch (err) {
      process.stderr.write(`svc-agent: ${(err as Error).message}\n`);
      return '';
    }
  }
}
