// svc-agent's workspace: auto-clone from a local repository and from a smart-HTTP server that
// requires a credential (served by a loopback clone-credential endpoint), the session branch,
// `git push origin HEAD` by the agent, and /svc/refresh.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { startGitHttpServer, type GitHttpServer } from '../helpers/git-http-server.js';
import {
  DaemonPool, PROJECT_ID, SESSION_ID, TOKEN, commitAndPush, git, gitAsync, makeUpstream, signed, type DaemonProcess,
} from './harness.js';

const bearer = { authorization: `Bearer ${TOKEN}` };
const pool = new DaemonPool();
const scratch = () => pool.scratch('upstream');
const start = (...args: Parameters<DaemonPool['start']>) => pool.start(...args);

afterAll(() => pool.cleanup());

describe('the session branch pushed by the controller while the daemon clones (issue 24 §2)', () => {
  it('the daemon\'s own push of the branch loses the race: it checks out the branch that won, and the engine starts', async () => {
    const s = scratch();
    const { bare, seed } = makeUpstream(s.upstream);
    const controllerSha = git(seed, 'rev-parse', 'HEAD');
    // the controller's create-only push lands between the daemon's clone and its push: the hook
    // creates the branch (as the controller does) and refuses the daemon's push of it
    const hook = path.join(bare, 'hooks', 'pre-receive');
    writeFileSync(hook, `#!/bin/sh\nenv -u GIT_QUARANTINE_PATH -u GIT_OBJECT_DIRECTORY -u GIT_ALTERNATE_OBJECT_DIRECTORIES git update-ref refs/heads/${SESSION_ID} ${controllerSha}\necho 'cannot lock ref: reference already exists' >&2\nexit 1\n`);
    chmodSync(hook, 0o755);
    const daemon = await start(s, { SVC_PROJECT_AUTO_CLONE: '1', SVC_REPO_URL: bare, SVC_BASE_REF: 'main' });
    const health = await daemon.waitFor((h) => h.engine.state === 'ready' || h.daemon.state === 'failed', 'cloned');
    expect(health.daemon.error).toBeNull();
    expect(health.repository.branch).toBe(SESSION_ID);
    expect(git(s.workspace, 'rev-parse', 'HEAD')).toBe(controllerSha);
    expect(git(s.workspace, 'rev-parse', '--abbrev-ref', '@{upstream}')).toBe(`origin/${SESSION_ID}`);
    await daemon.stop();
  });
});

describe('auto-clone from a local repository', () => {
  let s: ReturnType<typeof scratch>;
  let daemon: DaemonProcess;
  let other: string;
  let mainSha: string;

  beforeAll(async () => {
    s = scratch();
    const { bare, seed } = makeUpstream(s.upstream);
    mainSha = git(seed, 'rev-parse', 'HEAD');
    other = path.join(s.upstream, 'other');
    daemon = await start(s, {
      SVC_PROJECT_AUTO_CLONE: '1',
      SVC_REPO_URL: bare,
      SVC_BASE_REF: 'main',
      SVC_AGENT_NAME: 'build',
    });
    await daemon.waitFor((h) => h.engine.state === 'ready', 'cloned and engine ready');
    git(s.upstream, 'clone', '--quiet', bare, other);
  });

  it('clones, creates the missing session branch from the base and pushes it', async () => {
    const health = await daemon.health();
    expect(health.daemon.state).toBe('ready');
    expect(health.repository).toEqual({ url: path.join(s.upstream, 'project.git'), branch: SESSION_ID, commit: mainSha });
    expect(readFileSync(path.join(s.workspace, 'README.md'), 'utf8')).toBe('hello\n');
    expect(git(path.join(s.upstream, 'project.git'), 'rev-parse', `refs/heads/${SESSION_ID}`)).toBe(mainSha);
    expect(git(s.workspace, 'config', 'user.email')).toBe(`session-${SESSION_ID}@svc.invalid`);
    expect(git(s.workspace, 'config', 'user.name')).toBe('svc agent (build)');
  });

  it("health says when each phase of the daemon's boot happened, in order (the Session's boot timeline)", async () => {
    const { daemon: d, boot } = await daemon.health();
    const order = [d.started_at, boot.listening_at, boot.clone_started_at, boot.clone_ended_at, boot.restore_started_at, boot.restore_ended_at, boot.engine_started_at, boot.engine_ready_at];
    expect(order.every((at) => typeof at === 'string' && !Number.isNaN(Date.parse(at!))), JSON.stringify(boot)).toBe(true);
    const times = order.map((at) => Date.parse(at!));
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });

  it('the agent can commit and `git push origin HEAD`', () => {
    writeFileSync(path.join(s.workspace, 'agent.txt'), 'work\n');
    git(s.workspace, 'add', 'agent.txt');
    execCommit(s.workspace, 'agent work');
    git(s.workspace, 'push', '--quiet', 'origin', 'HEAD');
    const head = git(s.workspace, 'rev-parse', 'HEAD');
    expect(git(path.join(s.upstream, 'project.git'), 'rev-parse', `refs/heads/${SESSION_ID}`)).toBe(head);
    expect(git(s.workspace, 'log', '-1', '--format=%an <%ae>')).toBe(`svc agent (build) <session-${SESSION_ID}@svc.invalid>`);
  });

  it('/svc/refresh fast-forwards to a new commit on the session branch and restarts the engine with the new env', async () => {
    git(other, 'fetch', '--quiet', 'origin');
    git(other, 'checkout', '--quiet', '-B', 'session', `origin/${SESSION_ID}`);
    const pushed = commitAndPush(other, SESSION_ID, 'from-elsewhere.txt', 'parallel edit\n');
    const enginePid = ((await (await fetch(`${daemon.url}/global/health`, signed())).json()) as { pid: number }).pid;
    expect((await fetch(`${daemon.url}/svc/env`, { method: 'POST', headers: bearer, body: JSON.stringify({ env: { FEATURE_FLAG: 'on' } }) })).status).toBe(200);
    const res = await fetch(`${daemon.url}/svc/refresh`, { method: 'POST', headers: bearer });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ outcome: 'fast-forwarded', to: pushed });
    expect(git(s.workspace, 'rev-parse', 'HEAD')).toBe(pushed);
    expect(existsSync(path.join(s.workspace, 'from-elsewhere.txt'))).toBe(true);
    await daemon.waitFor((h) => h.engine.state === 'ready' && h.repository.commit === pushed, 'engine back after refresh');
    const engine = (await (await fetch(`${daemon.url}/fixture/env`, signed())).json()) as Record<string, string>;
    expect(engine.FEATURE_FLAG).toBe('on');
    const restarted = ((await (await fetch(`${daemon.url}/global/health`, signed())).json()) as { pid: number }).pid;
    expect(restarted).not.toBe(enginePid);
  });

  it('/svc/refresh reports a diverged workspace and changes nothing', async () => {
    const remote = commitAndPush(other, SESSION_ID, 'remote.txt', 'remote\n');
    writeFileSync(path.join(s.workspace, 'local.txt'), 'local\n');
    git(s.workspace, 'add', 'local.txt');
    execCommit(s.workspace, 'local work');
    const local = git(s.workspace, 'rev-parse', 'HEAD');
    const res = await fetch(`${daemon.url}/svc/refresh`, { method: 'POST', headers: bearer });
    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({ outcome: 'diverged', local, remote });
    expect(git(s.workspace, 'rev-parse', 'HEAD')).toBe(local);
    expect(existsSync(path.join(s.workspace, 'local.txt'))).toBe(true);
    expect((await daemon.health()).engine.state).toBe('ready');
  });

  it('a daemon restart keeps the workspace and its local commits', async () => {
    const local = git(s.workspace, 'rev-parse', 'HEAD');
    await daemon.stop();
    daemon = await start(s, { SVC_PROJECT_AUTO_CLONE: '1', SVC_REPO_URL: path.join(s.upstream, 'project.git'), SVC_BASE_REF: 'main' });
    const h = await daemon.waitFor((x) => x.engine.state === 'ready', 'engine ready after restart');
    expect(h.repository.commit).toBe(local);
  });
});

/** Commits as the agent would: the identity comes from the daemon's repository config. */
function execCommit(cwd: string, message: string): void {
  execFileSync('git', ['-c', 'user.useConfigOnly=true', 'commit', '--quiet', '-m', message], { cwd, env: agentEnv(), stdio: 'ignore' });
}

function agentEnv(): Record<string, string | undefined> {
  return { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^GIT_(AUTHOR|COMMITTER)_/.test(k))), GIT_TERMINAL_PROMPT: '0' };
}

describe('auto-clone over HTTP with a credential from the API', () => {
  let s: ReturnType<typeof scratch>;
  let gitServer: GitHttpServer;
  let api: http.Server;
  let apiUrl: string;
  const issued: string[] = [];
  const apiCalls: Array<{ url: string; authorization: string | undefined }> = [];

  beforeAll(async () => {
    s = scratch();
    const { bare } = makeUpstream(s.upstream);
    git(s.upstream, '--git-dir', bare, 'branch', SESSION_ID, 'main');
    // Each credential expires within the refresh margin, so the daemon must fetch a new one for
    // every git operation; the git server accepts only the newest.
    gitServer = await startGitHttpServer({ root: s.upstream, auth: (user, password) => user === 'x-svc' && password === issued.at(-1) });
    api = http.createServer((req, res) => {
      apiCalls.push({ url: req.url ?? '', authorization: req.headers.authorization });
      if (req.url !== `/v1/projects/${PROJECT_ID}/git/clone-credential` || req.headers.authorization !== `Bearer ${TOKEN}`) {
        res.writeHead(401).end();
        return;
      }
      issued.push(`pw-${issued.length + 1}-${Math.random().toString(36).slice(2)}`);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ username: 'x-svc', password: issued.at(-1), expires_at: new Date(Date.now() + 10_000).toISOString() }));
    });
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}/v1`;
  });

  afterAll(async () => {
    await gitServer?.close();
    api?.closeAllConnections();
    api?.close();
  });

  it('clones the existing session branch with the fetched credential and never stores it', async () => {
    const daemon = await start(s, {
      SVC_PROJECT_AUTO_CLONE: '1',
      SVC_REPO_URL: `${gitServer.url}/project.git`,
      SVC_API_URL: apiUrl,
    });
    const health = await daemon.waitFor((h) => h.engine.state === 'ready', 'cloned over HTTP');
    expect(health.repository.branch).toBe(SESSION_ID);
    expect(git(s.workspace, 'rev-parse', `${SESSION_ID}@{upstream}`)).toBe(git(s.workspace, 'rev-parse', 'HEAD'));
    expect(apiCalls.length).toBeGreaterThan(0);
    expect(apiCalls.every((c) => c.authorization === `Bearer ${TOKEN}`)).toBe(true);
    expect(gitServer.requests.some((r) => r.user === 'x-svc')).toBe(true);
    expect(git(s.workspace, 'remote', 'get-url', 'origin')).toBe(`${gitServer.url}/project.git`);
    const config = readFileSync(path.join(s.workspace, '.git', 'config'), 'utf8');
    const env = (await (await fetch(`${daemon.url}/fixture/env`, signed())).json()) as Record<string, string>;
    for (const password of issued) {
      expect(config).not.toContain(password);
      expect(daemon.output()).not.toContain(password);
      expect(JSON.stringify(env)).not.toContain(password);
    }
  });

  it('the agent pushes with `git push origin HEAD`; an expired credential is fetched again', async () => {
    const before = issued.length;
    writeFileSync(path.join(s.workspace, 'pushed.txt'), 'over http\n');
    git(s.workspace, 'add', 'pushed.txt');
    execCommit(s.workspace, 'push over http');
    await gitAsync(s.workspace, ['push', '--quiet', 'origin', 'HEAD'], agentEnv());
    expect(git(path.join(s.upstream, 'project.git'), 'rev-parse', `refs/heads/${SESSION_ID}`)).toBe(git(s.workspace, 'rev-parse', 'HEAD'));
    expect(issued.length).toBeGreaterThan(before);
  });

  it('engine homes under a data directory too long for a unix socket each serve their credentials (issue 20: EADDRINUSE before)', async () => {
    // two sandboxes whose socket paths differ only beyond the 108-byte limit
    const root = path.join(scratch().home, 'a-data-directory-whose-path-is-long'.repeat(3), 'sandboxes');
    // one after the other: the test's git server accepts only the newest credential
    for (const name of ['first', 'second']) {
      const t = scratch();
      const home = path.join(root, name, 'home');
      mkdirSync(home, { recursive: true });
      expect(Buffer.byteLength(home)).toBeGreaterThan(107);
      const daemon = await start({ ...t, home }, { SVC_PROJECT_AUTO_CLONE: '1', SVC_REPO_URL: `${gitServer.url}/project.git`, SVC_API_URL: apiUrl });
      const health = await daemon.waitFor((h) => h.engine.state === 'ready' || h.daemon.state === 'failed', 'cloned over HTTP');
      expect(health.daemon.error).toBeNull();
      expect(health.repository.branch).toBe(SESSION_ID);
      // a live first daemon could ask for a credential again and void the second's
      await daemon.stop();
    }
  });

  it('a clone the API refuses a credential for fails into health without secrets', async () => {
    const t = scratch();
    const daemon = await start(t, {
      SVC_PROJECT_AUTO_CLONE: '1',
      SVC_REPO_URL: `${gitServer.url}/project.git`,
      SVC_API_URL: `${apiUrl}/wrong-prefix`,
    });
    const h = await daemon.waitFor((x) => x.daemon.state === 'failed', 'clone failure');
    expect(h.status).toBe('failed');
    expect(h.daemon.error).toContain('git clone failed');
    expect(h.engine.state).toBe('stopped');
    expect(JSON.stringify(h)).not.toContain(TOKEN);
  });
});
