// Credentials reach git only through the environment; remote failures are typed and redacted.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { once } from 'node:events';
import os from 'node:os';
import path from 'node:path';
import {
  InvalidRemoteError, openMirror, PushRejectedError, TimeoutError, UnreachableError,
} from '../../src/git/index.js';
import { startGitHttpServer, type GitHttpServer } from '../helpers/git-http-server.js';
import { git, type HostRepo, seededHost, type WorkClone } from './fixtures.js';

const PASSWORD = 'pw-7f3a9c1e-not-in-argv';
const USERNAME = 'agent-user';

// Every git the engine starts goes through this wrapper, which logs its argv.
let wrapperDir: string;
let argvLog: string;
const originalPath = process.env.PATH;
beforeAll(() => {
  wrapperDir = mkdtempSync(path.join(os.tmpdir(), 'svc-git-wrapper-'));
  argvLog = path.join(wrapperDir, 'argv.log');
  const realGit = git(os.tmpdir(), '--exec-path') + '/git';
  writeFileSync(path.join(wrapperDir, 'git'), `#!/bin/sh\nprintf '%s\\n' "$*" >> '${argvLog}'\nexec '${realGit}' "$@"\n`);
  chmodSync(path.join(wrapperDir, 'git'), 0o755);
  process.env.PATH = `${wrapperDir}:${originalPath}`;
});
afterAll(() => {
  process.env.PATH = originalPath;
  rmSync(wrapperDir, { recursive: true, force: true });
});

let host: HostRepo | undefined;
let server: http.Server | undefined;
let gitServer: GitHttpServer | undefined;
afterEach(async () => {
  await gitServer?.close();
  gitServer = undefined;
  host?.cleanup();
  host = undefined;
  if (server) await new Promise((resolve) => server!.close(resolve));
  server = undefined;
});

/** A loopback HTTP server that accepts connections and never answers. */
async function silentServer(): Promise<{ url: string; sockets: Socket[] }> {
  const sockets: Socket[] = [];
  server = http.createServer(() => { /* never answers */ });
  server.on('connection', (socket) => sockets.push(socket));
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/org/repo.git`, sockets };
}

/** The seeded host served over smart HTTP, requiring USERNAME/PASSWORD. */
async function httpHost(): Promise<{ url: string; work: WorkClone }> {
  let work: WorkClone;
  ({ host, work } = seededHost());
  gitServer = await startGitHttpServer({ root: host.root, auth: { username: USERNAME, password: PASSWORD } });
  return { url: `${gitServer.url}/host.git`, work };
}

/** Runs `fn` with a fresh cache dir, removed afterwards. */
async function withCacheDir(fn: (cacheDir: string) => Promise<void>): Promise<void> {
  const cacheDir = mkdtempSync(path.join(os.tmpdir(), 'svc-git-cache-'));
  try {
    await fn(cacheDir);
  } finally {
    rmSync(cacheDir, { recursive: true, force: true });
  }
}

function filesContaining(dir: string, needle: string): string[] {
  const hits: string[] = [];
  for (const entry of readdirSync(dir, { recursive: true }) as string[]) {
    const file = path.join(dir, entry);
    if (statSync(file).isFile() && readFileSync(file).includes(needle)) hits.push(file);
  }
  return hits;
}

describe('credentials', () => {
  it('reach an http host through the helper: fetch, merge and branch push work; never in argv or on disk', async () => {
    const { url, work } = await httpHost();
    work.branch('feature', { 'f.txt': 'f\n' });
    work.checkout('main').write('m.txt', 'm\n').commit('main moves');
    work.push('main');
    writeFileSync(argvLog, '');
    const mirror = openMirror({ cacheDir: host!.cacheDir, projectId: 'p', url, credentials: { username: USERNAME, password: PASSWORD } });

    const result = await mirror.merge({ base: 'main', head: 'feature', message: 'Merge CR #1: over http' });
    expect(result.fast_forward).toBe(false);
    expect(host!.tip('main')).toBe(result.merge_commit_sha);
    expect(await mirror.pushBranch('session-1', result.base_commit_sha)).toEqual({ created: true });
    expect(host!.tip('session-1')).toBe(result.base_commit_sha);

    const served = gitServer!.requests.filter((r) => r.user !== null);
    expect(served.some((r) => r.path.endsWith('/git-upload-pack'))).toBe(true);
    expect(served.some((r) => r.path.endsWith('/git-receive-pack'))).toBe(true);
    expect(new Set(served.map((r) => r.user))).toEqual(new Set([USERNAME]));
    const argv = readFileSync(argvLog, 'utf8');
    expect(argv).toContain(' push ');
    expect(argv).not.toContain(PASSWORD);
    expect(filesContaining(mirror.dir, PASSWORD)).toEqual([]);
  });

  it('a wrong password is UnreachableError (authentication failed), without the password', async () => {
    const { url } = await httpHost();
    const wrong = `${PASSWORD}-wrong`;
    const mirror = openMirror({ cacheDir: host!.cacheDir, projectId: 'p', url, credentials: { username: USERNAME, password: wrong } });
    const error = await mirror.fetch().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnreachableError);
    expect((error as Error).message).toMatch(/Authentication failed/);
    expect((error as Error).message).not.toContain(wrong);
  });

  it('userinfo in the URL is moved into the credentials and redacted from messages', async () => {
    const { url } = await httpHost();
    writeFileSync(argvLog, '');
    const mirror = openMirror({ cacheDir: host!.cacheDir, projectId: 'p', url: url.replace('http://', `http://${USERNAME}:${PASSWORD}@`) });
    expect(mirror.displayUrl).toBe(url);
    expect(await mirror.resolveBranch('main')).toBe(host!.tip('main'));
    expect(readFileSync(argvLog, 'utf8')).not.toContain(PASSWORD);
    expect(readFileSync(path.join(mirror.dir, 'config'), 'utf8')).not.toContain(USERNAME);

    const bad = openMirror({ cacheDir: host!.cacheDir, projectId: 'q', url: url.replace('http://', `http://${USERNAME}:${PASSWORD}x@`) });
    const error = await bad.fetch().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnreachableError);
    expect((error as Error).message).not.toContain(PASSWORD);
  });

  it('a local host with credentials works and keeps them out of argv and the mirror', async () => {
    let work: WorkClone;
    ({ host, work } = seededHost());
    work.branch('feature', { 'f.txt': 'f\n' });
    writeFileSync(argvLog, '');
    const mirror = openMirror({ cacheDir: host.cacheDir, projectId: 'p', url: host.hostDir, credentials: { username: USERNAME, password: PASSWORD } });
    await mirror.merge({ base: 'main', head: 'feature', message: 'm' });
    expect(host.tip('main')).toBe(host.tip('feature'));
    expect(readFileSync(argvLog, 'utf8')).not.toContain(PASSWORD);
    expect(filesContaining(mirror.dir, PASSWORD)).toEqual([]);
  });

  it('rejects credentials that would inject credential-protocol lines', () => {
    expect(() => openMirror({ cacheDir: '/tmp/x', projectId: 'p', url: 'https://example.invalid/r.git', credentials: { username: 'u', password: 'a\nhost=evil' } }))
      .toThrow(InvalidRemoteError);
  });
});

describe('environment', () => {
  it('inherited GIT_* variables and user config do not reach the mirror', async () => {
    ({ host } = seededHost());
    const tip = host.tip('main');
    const saved = { ...process.env };
    Object.assign(process.env, {
      GIT_DIR: '/nonexistent', GIT_OBJECT_DIRECTORY: '/nonexistent/objects', GIT_INDEX_FILE: '/nonexistent/index',
      GIT_CONFIG_PARAMETERS: "'credential.helper'='store'",
    });
    try {
      const mirror = host.mirror();
      await mirror.fetch();
      expect(await mirror.resolveBranch('main')).toBe(tip);
    } finally {
      for (const key of ['GIT_DIR', 'GIT_OBJECT_DIRECTORY', 'GIT_INDEX_FILE', 'GIT_CONFIG_PARAMETERS']) {
        if (saved[key] === undefined) delete process.env[key];
        else process.env[key] = saved[key];
      }
    }
  });

  it('forced fetches asked for together share one fetch that sees every earlier push', async () => {
    let work: WorkClone;
    ({ host, work } = seededHost());
    const mirror = host.mirror();
    await mirror.fetch();
    work.write('late.txt', 'late\n').commit('late');
    work.push('main');
    writeFileSync(argvLog, '');

    await Promise.all(Array.from({ length: 10 }, () => host!.mirror().fetch({ force: true })));
    expect(await mirror.resolveBranch('main')).toBe(host.tip('main'));
    const fetches = readFileSync(argvLog, 'utf8').split('\n').filter((line) => / fetch /.test(line));
    expect(fetches).toHaveLength(1);

    await mirror.fetch({ force: true }); // asked after that one finished: a fetch of its own
    expect(readFileSync(argvLog, 'utf8').split('\n').filter((line) => / fetch /.test(line))).toHaveLength(2);
  });
});

describe('remote failures', () => {
  it('an unreachable remote is UnreachableError', async () => {
    await withCacheDir(async (cacheDir) => {
      const mirror = openMirror({ cacheDir, projectId: 'p', url: path.join(cacheDir, 'no-such-repo.git') });
      await expect(mirror.fetch()).rejects.toBeInstanceOf(UnreachableError);
      // No empty mirror is left behind to answer "no such branch" later.
      expect(readdirSync(cacheDir)).toEqual([]);
      await expect(mirror.resolveBranch('main')).rejects.toBeInstanceOf(UnreachableError);
    });
  });

  it('a remote that never answers times out and the git process is killed', async () => {
    const { url, sockets } = await silentServer();
    await withCacheDir(async (cacheDir) => {
      const mirror = openMirror({ cacheDir, projectId: 'p', url, remoteTimeoutMs: 500 });
      const error = await mirror.fetch().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TimeoutError);
      expect((error as TimeoutError).message).toBe('git fetch timed out after 500 ms');
      // The helper that held the connection (git-remote-http) died with the process group.
      expect(sockets.length).toBeGreaterThan(0);
      await Promise.all(sockets.map((socket) => (socket.closed ? null : once(socket, 'close'))));
    });
  });

  it('a push the host refuses (hook) is PushRejectedError and moves nothing', async () => {
    let work: WorkClone;
    ({ host, work } = seededHost());
    work.branch('feature', { 'f.txt': 'f\n' });
    const hook = path.join(host.hostDir, 'hooks', 'pre-receive');
    writeFileSync(hook, '#!/bin/sh\necho "main is protected" >&2\nexit 1\n');
    chmodSync(hook, 0o755);
    const base = host.tip('main');
    const mirror = openMirror({ cacheDir: host.cacheDir, projectId: 'p', url: host.hostDir });

    const error = await mirror.merge({ base: 'main', head: 'feature', message: 'm' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PushRejectedError);
    expect((error as Error).message).toMatch(/pre-receive hook declined: main is protected$/);
    expect((error as PushRejectedError).reason).toBe('pre-receive hook declined: main is protected');
    expect(host.tip('main')).toBe(base);
    expect(await mirror.resolveBranch('main')).toBe(base);
  });

  it('a push that timed out after the host took it counts as merged', async () => {
    let work: WorkClone;
    ({ host, work } = seededHost());
    const head = work.branch('feature', { 'f.txt': 'f\n' });
    // post-receive runs after the ref moved; push waits for it, so the push times out.
    const hook = path.join(host.hostDir, 'hooks', 'post-receive');
    writeFileSync(hook, '#!/bin/sh\nsleep 5\n');
    chmodSync(hook, 0o755);
    const mirror = host.mirror({ remoteTimeoutMs: 1_500 });
    await mirror.fetch();

    const result = await mirror.merge({ base: 'main', head: 'feature', message: 'm' });
    expect(result).toMatchObject({ merge_commit_sha: head, fast_forward: true });
    expect(host.tip('main')).toBe(head);
    expect(await mirror.resolveBranch('main')).toBe(head);
  });

  it.each(['relative/repo.git', '-oProxyCommand=x', 'ftp://example.invalid/r.git'])('refuses the URL %s', (url) => {
    expect(() => openMirror({ cacheDir: '/tmp/x', projectId: 'p', url })).toThrow(InvalidRemoteError);
  });
});
