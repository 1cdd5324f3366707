// svc-agent's start through an API that is away, starting or cutting connections (issue 24 §5):
// the clone is tried again with backoff until the start deadline, health says which step waits
// and why; a permanent failure fails at once; past the deadline the start fails saying why.
import { afterAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { relayTo, startGitHttpServer, type GitHttpServer } from '../helpers/git-http-server.js';
import { DaemonPool, PROJECT_ID, SESSION_ID, TOKEN, freePort, git, makeUpstream, type Health } from './harness.js';

const pool = new DaemonPool();
afterAll(() => pool.cleanup());

const retryOf = (h: Health) => h.daemon.retry;
const quick = { SVC_START_RETRY_BACKOFF_MS: '100', SVC_START_RETRY_MAX_BACKOFF_MS: '300' };

/**
 * The API as a sandbox sees it: the clone credential and the git gateway on one port, which is
 * `down` (nothing listens), answers `503` (loading its caches), `reset`s connections, answers 503
 * to the credential call only (`credential-503`: git then only says it could not read a username),
 * or is `up`.
 */
class FlakyApi {
  mode: 'down' | '503' | 'reset' | 'credential-503' | 'up' = 'down';
  private server: http.Server | null = null;
  constructor(readonly port: number, private readonly git: GitHttpServer) {}

  get url(): string { return `http://127.0.0.1:${this.port}`; }

  async listen(mode: FlakyApi['mode']): Promise<void> {
    this.mode = mode;
    this.server = http.createServer((req, res) => {
      if (this.mode === 'reset') { req.socket.destroy(); return; }
      if (this.mode === '503') { res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"not ready"}'); return; }
      if (req.url === `/v1/projects/${PROJECT_ID}/git/clone-credential`) {
        if (this.mode === 'credential-503') { res.writeHead(503).end(); return; }
        if (req.headers.authorization !== `Bearer ${TOKEN}`) { res.writeHead(401).end(); return; }
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ username: 'x-svc', password: 'pw', expires_at: new Date(Date.now() + 600_000).toISOString() }));
        return;
      }
      relayTo(this.git.url, req, res);
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

describe('svc-agent waits out a transient start failure', () => {
  it('the API unreachable, answering 503, cutting connections, refusing a credential for a moment, then up: the clone is tried again and the engine starts', async () => {
    const s = pool.scratch('upstream');
    const { bare } = makeUpstream(s.upstream);
    git(s.upstream, '--git-dir', bare, 'branch', SESSION_ID, 'main');
    const gitServer = await startGitHttpServer({ root: s.upstream, auth: { username: 'x-svc', password: 'pw' } });
    const api = new FlakyApi(await freePort(), gitServer);
    try {
      const daemon = await pool.start(s, { SVC_PROJECT_AUTO_CLONE: '1', SVC_REPO_URL: `${api.url}/project.git`, SVC_API_URL: `${api.url}/v1`, ...quick });
      const away = await daemon.waitFor((h) => (retryOf(h)?.attempt ?? 0) >= 2, 'the clone tried again');
      expect(away.status).toBe('starting');
      expect(away.daemon.state).toBe('cloning');
      expect(away.daemon.failed_step).toBeNull(); // waiting is not giving up
      expect(retryOf(away)).toMatchObject({ step: 'clone', cause: 'the API or the git host is unreachable', error: expect.stringContaining('git clone failed') });
      await api.listen('503');
      expect(retryOf(await daemon.waitFor((h) => retryOf(h)?.cause === 'the API is starting (503)', 'a 503 waited out'))?.error).toContain('503');
      api.mode = 'reset';
      await daemon.waitFor((h) => retryOf(h)?.cause === 'the connection was cut off', 'a cut connection waited out');
      api.mode = 'credential-503';
      const noCredential = await daemon.waitFor((h) => retryOf(h)?.error.startsWith('the clone credential could not be fetched') === true, 'a credential call waited out');
      expect(retryOf(noCredential)).toMatchObject({ cause: 'the API is starting (503)', error: expect.stringContaining('clone-credential: answered 503') });
      api.mode = 'up';
      const ready = await daemon.waitFor((h) => h.engine.state === 'ready', 'cloned once the API is back');
      expect(ready.daemon.error).toBeNull();
      expect(retryOf(ready)).toBeNull();
      expect(ready.daemon.failed_step).toBeNull();
      expect(ready.repository.branch).toBe(SESSION_ID);
      expect(daemon.output()).toMatch(/clone failed \(attempt 1\): the API or the git host is unreachable; trying again in 100 ms/);
    } finally {
      await api.close();
      await gitServer.close();
    }
  });

  it('a permanent failure (no base ref to branch from) fails at once, saying which step failed and why', async () => {
    const s = pool.scratch('upstream');
    const bare = path.join(s.upstream, 'empty.git'); // nothing to branch the session from
    git(s.upstream, 'init', '--quiet', '--bare', bare);
    const started = Date.now();
    const daemon = await pool.start(s, { SVC_PROJECT_AUTO_CLONE: '1', SVC_REPO_URL: bare, SVC_BASE_REF: 'nope', ...quick });
    const failed = await daemon.waitFor((h) => h.daemon.state === 'failed', 'the start failed');
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(failed.daemon.error).toBe('clone failed: the session branch does not exist upstream and the base ref "nope" was not found');
    expect(failed.daemon.failed_step).toBe('clone'); // the Sandbox's reason: CloneFailed
    expect(daemon.output()).not.toContain('trying again');
  });

  it('past the start deadline: fails, naming the step, the cause and the attempts', async () => {
    const s = pool.scratch();
    const port = await freePort(); // nothing listens there
    const daemon = await pool.start(s, {
      SVC_PROJECT_AUTO_CLONE: '1', SVC_REPO_URL: `http://127.0.0.1:${port}/project.git`, SVC_API_URL: `http://127.0.0.1:${port}/v1`,
      ...quick, SVC_START_DEADLINE_MS: '1500',
    });
    const failed = await daemon.waitFor((h) => h.daemon.state === 'failed', 'the start given up');
    expect(failed.daemon.error).toMatch(/^clone failed: the API or the git host is unreachable, still after \d+ attempts over \d s \(start deadline 2 s\); the last: git clone failed/);
    expect(retryOf(failed)).toBeNull();
    expect(failed.daemon.failed_step).toBe('clone');
    expect(readdirSync(s.workspace)).toEqual([]); // nothing half-cloned left for the next start
  });
});
