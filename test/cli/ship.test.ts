/* eslint-disable @typescript-eslint/no-explicit-any -- JSON output */
// `svc ship` as an agent runs it in a session (SPEC §1 mandate): the built CLI in a clone on the
// session branch with the sandbox's environment; the API in-process with a real host repository.
import { execFile, execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_VERSION, SESSION, controllerReference, type Project, type Session } from '../../src/resources/index.js';
import { startHarness, NAMESPACE, type Harness } from '../changerequests/harness.js';
import { seededHost, type HostRepo } from '../git/fixtures.js';
import { SVC_BIN } from './run-cli.js';

describe('svc ship', () => {
  let h: Harness;
  let host: HostRepo;
  let project: Project;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  const sessionId = randomUUID();

  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, encoding: 'utf8', env }).trim();
  // async: the API answering it runs in this process
  const shipWith = (shipEnv: NodeJS.ProcessEnv, args: string[]) => new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, [SVC_BIN, 'ship', ...args], { cwd: dir, env: shipEnv, encoding: 'utf8' }, (error, stdout, stderr) => {
      resolve({ status: error ? Number(error.code ?? 1) : 0, stdout, stderr });
    });
  });
  const ship = (...args: string[]) => shipWith(env, args);
  const commit = (file: string, text: string, message: string) => {
    writeFileSync(path.join(dir, file), text);
    git('add', '-A');
    git('commit', '-q', '-m', message);
    return git('rev-parse', 'HEAD');
  };

  beforeAll(async () => {
    h = await startHarness();
    ({ host } = seededHost());
    project = await h.project('shipper', host.hostDir);
    await h.client.resource<Session>(SESSION).create({
      apiVersion: API_VERSION, kind: SESSION.kind,
      metadata: { name: sessionId, namespace: NAMESPACE, ownerReferences: [controllerReference(project)] },
      spec: { projectRef: { name: 'shipper' }, agent: 'default', baseRef: 'main', desiredState: 'running' },
    } as Session);
    dir = path.join(host.root, 'sandbox');
    env = {
      ...process.env,
      GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_AUTHOR_NAME: 'Agent', GIT_AUTHOR_EMAIL: 'agent@example.com', GIT_COMMITTER_NAME: 'Agent', GIT_COMMITTER_EMAIL: 'agent@example.com',
      SVC_API_URL: h.apiUrl, SVC_CLI_TOKEN: h.tokens.pusher, SVC_PROJECT_ID: project.metadata.uid!,
      SVC_BRANCH_NAME: sessionId, SVC_SESSION_ID: sessionId, NO_COLOR: '1',
    };
    execFileSync('git', ['clone', '-q', host.hostDir, dir], { env });
    git('checkout', '-q', '-b', sessionId);
  }, 60_000);

  afterAll(async () => {
    await h?.close();
    host?.cleanup();
  });

  it('refuses an invalid manifest before pushing', async () => {
    commit('svc.yaml', 'svc_version: 2\ntriggers: nope\n', 'broken manifest');
    const r = await ship('--title', 'broken');
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('nothing was pushed');
    expect(host.tip(sessionId)).toBeNull();
    git('reset', '-q', '--hard', 'HEAD~1');
  });

  it('pre-flight, pushes the session branch, opens the CR with the session as origin', async () => {
    const sha = commit('feature.txt', 'feature\n', 'Add the feature');
    const r = await ship('--title', 'Ship the feature');
    expect(r.stderr.split('\n').filter((l) => l && !/^(To |\s|remote:)/.test(l))).toEqual([]);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('pre-flight passed: no svc.yaml or svc.toml');
    expect(r.stdout).toMatch(/Opened CR #1: Ship the feature \(.* -> main\)/);
    expect(host.tip(sessionId)).toBe(sha);
  });

  it('pushes new commits and shows the CR already open; --json', async () => {
    const sha = commit('feature.txt', 'feature v2\n', 'Polish');
    const r = await ship('--json');
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout) as any;
    expect(out.created).toBe(false);
    expect(out.change_request).toMatchObject({ number: 1, title: 'Ship the feature', head_ref: sessionId, origin_session_id: sessionId });
    expect(host.tip(sessionId)).toBe(sha);
    const listed = await h.call(h.tokens.admin, 'GET', `/projects/${project.metadata.uid}/change-requests?status=all`);
    expect(listed.body.change_requests).toHaveLength(1);
  });

  it('titles a new CR after the last commit when --title is absent', async () => {
    await h.call(h.tokens.admin, 'POST', `/projects/${project.metadata.uid}/change-requests/${(await h.call(h.tokens.admin, 'GET', `/projects/${project.metadata.uid}/change-requests`)).body.change_requests[0].cr_id}/close`);
    commit('more.txt', 'more\n', 'More work');
    const r = await ship('--json');
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ created: true, change_request: { number: 2, title: 'More work' } });
  });

  it('refuses to ship the default branch outside a session: nothing is pushed to it, no CR is opened', async () => {
    const before = host.tip('main');
    git('checkout', '-q', '-b', 'main-work', 'origin/main');
    git('branch', '-q', '-f', 'main', 'HEAD');
    git('checkout', '-q', 'main');
    commit('direct.txt', 'straight to main\n', 'Skip review');
    // a person's clone: no session in the environment, the checked-out branch is the head
    const { SVC_BRANCH_NAME: _branch, SVC_SESSION_ID: _session, ...outside } = env;
    const r = await shipWith(outside, ['--title', 'direct', '--json']);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('main is the project\'s default branch: work reaches it only through a change request');
    expect(host.tip('main')).toBe(before);
    const listed = await h.call(h.tokens.admin, 'GET', `/projects/${project.metadata.uid}/change-requests?status=all`);
    expect(listed.body.change_requests.map((cr: { title: string }) => cr.title)).not.toContain('direct');
    git('checkout', '-q', sessionId);
  });

  it('refuses to ship from another branch than the session branch', async () => {
    git('checkout', '-q', '-b', 'elsewhere');
    const r = await ship('--title', 'x');
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`the session branch is ${sessionId} but elsewhere is checked out`);
    git('checkout', '-q', sessionId);
  });
});
