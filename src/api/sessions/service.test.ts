// SessionService.start reads the agent from the default branch's manifest through a real mirror
// of a real repository. Starts that come together share one read (git, counted through a `git`
// on PATH that logs each call); a merge or a push svc saw (an invalidated mirror) is read again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openMirror } from '../../git/index.js';
import type { Project, Session } from '../../resources/index.js';
import { SessionService } from './service.js';
import type { SessionStore } from './store.js';

let tmp: string;
let repo: string;
let calls: string;
let savedPath: string | undefined;
const project = { apiVersion: 'svc.dev/v1alpha1', kind: 'Project', metadata: { name: 'web', namespace: 'default', uid: 'p-manifest' }, spec: {} } as Project;

function manifest(defaultAgent: string): string {
  return `svc_version: 2\ndefault_agent: ${defaultAgent}\nagents:\n  first: {}\n  second: {}\n`;
}

function commit(defaultAgent: string): void {
  writeFileSync(path.join(repo, 'svc.yaml'), manifest(defaultAgent));
  execFileSync('git', ['-C', repo, 'commit', '-qam', `default ${defaultAgent}`]);
}

function gitCalls(): number {
  try { return readFileSync(calls, 'utf8').split('\n').filter(Boolean).length; } catch { return 0; }
}

function service(): SessionService {
  const store = {
    gitCredentials: async () => null,
    namespaceAnnotations: async () => ({}),
    slotHolders: async () => [],
    createSession: async (session: Session) => session,
  } as unknown as SessionStore;
  return new SessionService({ store, mirrorDir: path.join(tmp, 'mirrors'), defaultCap: 1000 });
}

beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'svc-start-'));
  repo = path.join(tmp, 'repo');
  execFileSync('git', ['init', '-q', '-b', 'main', repo]);
  execFileSync('git', ['-C', repo, 'config', 'user.email', 't@example.com']);
  execFileSync('git', ['-C', repo, 'config', 'user.name', 't']);
  writeFileSync(path.join(repo, 'svc.yaml'), manifest('first'));
  execFileSync('git', ['-C', repo, 'add', '.']);
  execFileSync('git', ['-C', repo, 'commit', '-qm', 'init']);
  project.spec = { repoUrl: repo, defaultBranch: 'main' } as Project['spec'];
  // every git the service runs, logged, then the real one
  const bin = path.join(tmp, 'bin');
  calls = path.join(tmp, 'git-calls');
  mkdirSync(bin);
  const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
  writeFileSync(path.join(bin, 'git'), `#!/bin/sh\necho "$1" >> '${calls}'\nexec '${realGit}' "$@"\n`);
  chmodSync(path.join(bin, 'git'), 0o755);
  savedPath = process.env.PATH;
  process.env.PATH = `${bin}:${savedPath}`;
});

afterAll(() => {
  process.env.PATH = savedPath;
  rmSync(tmp, { recursive: true, force: true });
});

describe('SessionService.start: the agent from the default branch manifest', () => {
  it('ten starts at once read it once: the git calls of one start, not ten times those', async () => {
    const sessions = service();
    const before = gitCalls();
    await sessions.start(project, {}, 'u1');
    const one = gitCalls() - before;
    expect(one).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 2100)); // past the reuse window: the next batch reads again
    const batch = gitCalls();
    const started = await Promise.all(Array.from({ length: 10 }, () => sessions.start(project, {}, 'u1')));
    expect(started.map((s) => s.spec.agent)).toEqual(Array(10).fill('first'));
    expect(gitCalls() - batch).toBeLessThanOrEqual(one);
  });

  it('a merge or a push svc saw (the mirror invalidated) is read by the next start; an unknown agent is a 400', async () => {
    const sessions = service();
    expect((await sessions.start(project, {}, 'u1')).spec.agent).toBe('first');
    commit('second');
    openMirror({ cacheDir: path.join(tmp, 'mirrors'), projectId: project.metadata.uid!, url: repo }).invalidate();
    expect((await sessions.start(project, {}, 'u1')).spec.agent).toBe('second');
    await expect(sessions.start(project, { agent: 'third' }, 'u1')).rejects.toMatchObject({ status: 400 });
  });
});
