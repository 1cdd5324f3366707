// The session branch push meets a git host that is away (issue 24 §5), through `svc dev` (the
// operator pushes to a real smart-HTTP git host on loopback behind a door this test opens and
// shuts): a host away for a moment is waited out, the session runs once it is back and its branch
// is on the host; a host that stays away past the start deadline fails the session saying which
// step failed, why, and after how many attempts.
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildArtifacts, freePort } from '../daemon/harness.js';
import { callApi, fixtureEngineArgs, REPO_ROOT, startDev, stopDevAndSandboxes, type DevInstance } from '../helpers/dev.js';
import { relayTo, startGitHttpServer, type GitHttpServer } from '../helpers/git-http-server.js';
import { makeRepo, run, runOk, waitFor } from '../dev/util.js';

const SVC = path.join(REPO_ROOT, 'bin/svc.js');
/**
 * Short, so that a host that stays away fails the start within the test; long enough that a
 * sandbox started on a loaded machine (a CI run starting 30 sessions beside it) retries its clone
 * before the deadline ends the session.
 */
const DEADLINE_MS = 30_000;

interface SessionView { id: string; status: string; reason: string | null; message: string | null; branch: string | null }

/**
 * The git host as the operator reaches it: `closed` (nothing listens: connection refused),
 * `open` (relayed to the git server), or `cut-pushes` (fetches relayed, a push's connection cut).
 */
class GitHostDoor {
  mode: 'open' | 'cut-pushes' = 'open';
  private server: http.Server | null = null;
  constructor(readonly port: number, private readonly git: GitHttpServer) {}

  get url(): string { return `http://127.0.0.1:${this.port}`; }

  async open(mode: GitHostDoor['mode'] = 'open'): Promise<void> {
    this.mode = mode;
    if (this.server) return;
    this.server = http.createServer((req, res) => {
      if (this.mode === 'cut-pushes' && (req.url ?? '').includes('git-receive-pack')) { req.socket.destroy(); return; }
      relayTo(this.git.url, req, res);
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

let dev: DevInstance;
let gitServer: GitHttpServer;
let door: GitHostDoor;
let projectId: string;
let hostRepo: string;

const kubectl = (...args: string[]) => runOk('kubectl', args, dev.env);
const sessionsPath = () => `/projects/${projectId}/sessions`;
const getSession = async (id: string) => (await callApi<{ session: SessionView }>(dev, 'GET', `${sessionsPath()}/${id}`)).body.session;
const branchReady = async (id: string) => JSON.parse(await kubectl('get', 'session', id, '-o', 'jsonpath={.status.conditions[?(@.type=="BranchReady")]}') || '{}') as { status?: string; reason?: string; message?: string };
const hostHas = (id: string) => execFileSync('git', ['--git-dir', hostRepo, 'for-each-ref', '--format=%(refname)', `refs/heads/${id}`], { encoding: 'utf8' }).trim() === `refs/heads/${id}`;

async function startSession(): Promise<string> {
  const res = await callApi<{ session: SessionView }>(dev, 'POST', sessionsPath(), {});
  expect(res.status, res.text).toBe(201);
  return res.body.session.id;
}

beforeAll(async () => {
  const { fixtureEngine } = await buildArtifacts();
  dev = await startDev({
    args: fixtureEngineArgs(fixtureEngine),
    extraEnv: { SVC_START_DEADLINE_MS: String(DEADLINE_MS), SVC_START_RETRY_BACKOFF_MS: '200', SVC_START_RETRY_MAX_BACKOFF_MS: '500' },
  });
  const root = path.join(dev.dataDir, 'git-host');
  mkdirSync(root, { recursive: true });
  const work = path.join(dev.dataDir, 'work');
  makeRepo(work, { 'svc.yaml': 'svc_version: 2\ndefault_agent: coder\nagents:\n  coder: {}\n' });
  hostRepo = path.join(root, 'r.git');
  await runOk('git', ['clone', '--quiet', '--bare', work, hostRepo]);
  gitServer = await startGitHttpServer({ root });
  door = new GitHostDoor(await freePort(), gitServer);
  await door.open();
  await runOk('kubectl', ['apply', '-f', '-'], dev.env, JSON.stringify({ apiVersion: 'svc.dev/v1alpha1', kind: 'Project', metadata: { name: 'away' }, spec: { repoUrl: `${door.url}/r.git`, defaultBranch: 'main' } }));
  await waitFor('project away Ready', async () => (await kubectl('get', 'project', 'away', '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')) === 'True');
  projectId = await kubectl('get', 'project', 'away', '-o', 'jsonpath={.metadata.uid}');
}, 120_000);

afterAll(async () => {
  await stopDevAndSandboxes(dev);
  await door?.close();
  await gitServer?.close();
});

describe('the session branch push waits out a git host that is away', () => {
  it('away for a moment: provisioning, saying it waits for the host and why; once the host is back the branch is pushed and the session runs', async () => {
    await door.close();
    const id = await startSession();
    try {
      const waiting = await waitFor('BranchReady HostUnreachable, trying again', async () => {
        const c = await branchReady(id);
        return c.reason === 'HostUnreachable' && c.message?.includes('trying again') && c;
      }, 20_000);
      expect(waiting.status).toBe('False');
      expect(waiting.message).toContain(`${door.url}/r.git`);
      const session = await getSession(id);
      expect(session).toMatchObject({ status: 'provisioning', reason: null });
      expect(session.message).toMatch(/^waiting to push the session branch: could not create the session branch/);
      const shown = await run(process.execPath, [SVC, 'sessions', 'show', id, '--project', projectId], dev.env);
      expect(shown.stdout).toContain('waiting to push the session branch');
      expect(await kubectl('get', 'session', id, '-o', 'jsonpath={.status.branchRetry.attempts}')).toMatch(/^[1-9]\d*$/);
    } finally {
      await door.open();
    }
    const running = await waitFor(`session ${id} running`, async () => { const s = await getSession(id); return s.status === 'running' && s; }, 30_000);
    expect(running.branch).toBe(id);
    expect(hostHas(id)).toBe(true);
    expect(await branchReady(id)).toMatchObject({ status: 'True', reason: 'BranchPushed' });
    expect(await kubectl('get', 'session', id, '-o', 'jsonpath={.status.branchRetry}')).toBe('');
  }, 60_000);

  it('away past the start deadline: failed, saying the step, the cause and the attempts; the branch never came', async () => {
    // fetches still work (the sandbox's clone does), every push's connection is cut
    door.mode = 'cut-pushes';
    try {
      const id = await startSession();
      // svc-agent, finding no branch to clone, pushes it through the git gateway: the gateway passes
      // on git's words for a push that did not reach the host (not "refused"), so svc-agent waits too
      await waitFor('the sandbox waiting on its push', async () => {
        const message = await kubectl('get', 'sandbox', id, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].message}');
        return /its clone failed \d+ time\(s\): the connection was cut off; trying again/.test(message);
      }, DEADLINE_MS);
      const failed = await waitFor(`session ${id} failed`, async () => { const s = await getSession(id); return s.status === 'failed' && s; }, DEADLINE_MS + 30_000);
      expect(failed.message).toMatch(/^session branch push failed: the connection was cut off, still after \d+ attempts over \d+ s \(start deadline 30 s\); the last: could not create the session branch in http:\/\/127\.0\.0\.1:\d+\/r\.git/);
      expect(Number(/after (\d+) attempts/.exec(failed.message!)![1])).toBeGreaterThan(3);
      // the Project's classification of git's failure, on the session and its BranchReady alike
      expect(failed.reason).toMatch(/^(HostUnreachable|RepositoryUnreachable)$/);
      expect(failed.reason).toBe(await kubectl('get', 'session', id, '-o', 'jsonpath={.status.conditions[?(@.type=="BranchReady")].reason}'));
      expect(hostHas(id)).toBe(false);
      // a failed session keeps no sandbox running
      await waitFor('its sandbox stopped', async () => ['error', 'stopped'].includes(await kubectl('get', 'sandbox', id, '-o', 'jsonpath={.status.state}')));
    } finally {
      door.mode = 'open';
    }
  }, DEADLINE_MS + 60_000);
});
