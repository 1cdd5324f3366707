// The branch step against real repositories: a session the API started carries the default
// branch's tip as the start read it (BASE_SHA_ANNOTATION); where the operator's mirror agrees, the
// branch is cut there without a fetch from the host (the start's slowest step), else as before.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { KubeClient } from '../../src/kube/index.js';
import type { ReconcileContext } from '../../src/runtime/index.js';
import { BASE_SHA_ANNOTATION, type Project, type Session } from '../../src/resources/index.js';
import { countGitCalls } from '../../test/helpers/git-calls.js';
import type { SessionFacts } from './decide.js';
import { openProjectMirror, performSessionStep } from './steps.js';

let tmp: string;
let host: string;
let work: string;
let project: Project;
const shas: string[] = [];

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

function commit(text: string): string {
  writeFileSync(path.join(work, 'README.md'), text);
  git(work, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qam', text);
  git(work, 'push', '-q', 'origin', 'main');
  return git(work, 'rev-parse', 'HEAD');
}

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'svc-branch-push-'));
  host = path.join(tmp, 'host.git');
  work = path.join(tmp, 'work');
  git(tmp, 'init', '-q', '--bare', '-b', 'main', host);
  git(tmp, 'clone', '-q', host, work);
  writeFileSync(path.join(work, 'README.md'), 'a');
  git(work, 'add', '.');
  shas.push(commit('first'));
  project = { metadata: { name: 'web', namespace: 'default', uid: 'p-branch' }, spec: { repoUrl: host, defaultBranch: 'main' } } as Project;
  // the operator's mirror as the Project controller left it, at the first commit
  await openProjectMirror(path.join(tmp, 'mirrors'), project, null).fetch({ force: true });
  // then main moves on the host
  shas.push(commit('second'));
});

afterAll(() => rmSync(tmp, { recursive: true, force: true }));

async function pushBranch(name: string, annotations?: Record<string, string>): Promise<{ baseSha: string | undefined; fetched: boolean }> {
  const session = { metadata: { name, namespace: 'default', uid: name, annotations }, spec: { projectRef: { name: 'web' }, baseRef: 'main' } } as unknown as Session;
  const ctx = { client: {} as KubeClient, resource: () => ({}) } as unknown as ReconcileContext;
  const calls = countGitCalls();
  try {
    const result = await performSessionStep(session, { kind: 'push-branch', baseRef: 'main' }, ctx, { project } as SessionFacts, { mirrorDir: path.join(tmp, 'mirrors'), tokenNamespace: 'default' });
    const branch = result.observed?.branch;
    expect(branch?.kind).toBe('ready');
    expect(git(host, 'rev-parse', `refs/heads/${name}`)).toBe(branch?.kind === 'ready' ? branch.baseSha : '');
    return { baseSha: branch?.kind === 'ready' ? branch.baseSha : undefined, fetched: calls.lines().some((line) => / fetch /.test(line)) };
  } finally {
    calls.restore();
  }
}

it('the tip the start read, where the mirror has the base ref there too: the branch is cut there, no fetch', async () => {
  expect(await pushBranch('s-agreed', { [BASE_SHA_ANNOTATION]: shas[0]! })).toEqual({ baseSha: shas[0], fetched: false });
});

it('a tip the mirror does not agree with, or none: a fetch, and the branch at the host\'s tip', async () => {
  expect(await pushBranch('s-newer', { [BASE_SHA_ANNOTATION]: shas[1]! })).toEqual({ baseSha: shas[1], fetched: true });
  shas.push(commit('third'));
  expect(await pushBranch('s-none')).toEqual({ baseSha: shas[2], fetched: true });
  expect(await pushBranch('s-stale', { [BASE_SHA_ANNOTATION]: shas[0]! })).toEqual({ baseSha: shas[2], fetched: true });
});
