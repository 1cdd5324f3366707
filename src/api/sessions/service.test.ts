// SessionService.start reads the agent from the default branch's manifest through a real mirror
// of a real repository. Starts that come together share one read (git processes, counted); a
// merge or a push svc saw (an invalidated mirror) is read again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openMirror } from '../../git/index.js';
import { BASE_SHA_ANNOTATION, type Project, type Session } from '../../resources/index.js';
import { countGitCalls, type GitCalls } from '../../../test/helpers/git-calls.js';
import { SessionService } from './service.js';
import type { SessionStore } from './store.js';

let tmp: string;
let repo: string;
let calls: GitCalls;
const project = { apiVersion: 'svc.dev/v1alpha1', kind: 'Project', metadata: { name: 'web', namespace: 'default', uid: 'p-manifest' }, spec: {} } as Project;

function manifest(defaultAgent: string): string {
  return `svc_version: 2\ndefault_agent: ${defaultAgent}\nagents:\n  first: {}\n  second: {}\n`;
}

function commit(defaultAgent: string): void {
  writeFileSync(path.join(repo, 'svc.yaml'), manifest(defaultAgent));
  execFileSync('git', ['-C', repo, 'commit', '-qam', `default ${defaultAgent}`]);
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
  // every git the service runs, counted
  calls = countGitCalls();
});

afterAll(() => {
  calls.restore();
  rmSync(tmp, { recursive: true, force: true });
});

describe('SessionService.start: the agent from the default branch manifest', () => {
  it('ten starts at once read it once: the git calls of one start, not ten times those', async () => {
    const sessions = service();
    const before = calls.count();
    await sessions.start(project, {}, 'u1');
    const one = calls.count() - before;
    expect(one).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 2100)); // past the reuse window: the next batch reads again
    const batch = calls.count();
    const started = await Promise.all(Array.from({ length: 10 }, () => sessions.start(project, {}, 'u1')));
    expect(started.map((s) => s.spec.agent)).toEqual(Array(10).fill('first'));
    expect(calls.count() - batch).toBeLessThanOrEqual(one);
  });

  it('a merge or a push svc saw (the mirror invalidated) is read by the next start; an unknown agent is a 400', async () => {
    const sessions = service();
    expect((await sessions.start(project, {}, 'u1')).spec.agent).toBe('first');
    commit('second');
    openMirror({ cacheDir: path.join(tmp, 'mirrors'), projectId: project.metadata.uid!, url: repo }).invalidate();
    const before = calls.count();
    const started = await sessions.start(project, {}, 'u1');
    expect(started.spec.agent).toBe('second');
    // the fetch, then the tip and both candidates' sizes, then svc.yaml: three git processes (five before)
    expect(calls.count() - before).toBe(3);
    await expect(sessions.start(project, { agent: 'third' }, 'u1')).rejects.toMatchObject({ status: 400 });
    // the tip it read, for the Session controller to cut the branch there (not for another base ref)
    expect(started.metadata.annotations?.[BASE_SHA_ANNOTATION]).toBe(execFileSync('git', ['-C', repo, 'rev-parse', 'main'], { encoding: 'utf8' }).trim());
    expect((await sessions.start(project, { baseRef: 'other' }, 'u1')).metadata.annotations?.[BASE_SHA_ANNOTATION]).toBeUndefined();
  });
});

describe('SessionService.start: the cap', () => {
  it('starts that come together are admitted in order against one read of the cap: those past it get 429, nothing created for them', async () => {
    const created: Session[] = [];
    let capReads = 0;
    const store = {
      gitCredentials: async () => null,
      namespaceAnnotations: async () => { capReads++; return {}; },
      slotHolders: async () => [...created],
      createSession: async (session: Session) => {
        await new Promise((r) => setTimeout(r, 20)); // an API server's write
        created.push(session);
        return session;
      },
    } as unknown as SessionStore;
    const sessions = new SessionService({ store, mirrorDir: path.join(tmp, 'mirrors'), defaultCap: 4 });
    const results = await Promise.allSettled(Array.from({ length: 7 }, (_, i) => sessions.start(project, { prompt: `p${i}` }, 'u1')));
    const outcome = results.map((r) => (r.status === 'fulfilled' ? r.value.spec.initialPrompt : (r.reason as { status: number }).status));
    expect(outcome).toEqual(['p0', 'p1', 'p2', 'p3', 429, 429, 429]);
    expect(created.map((s) => s.spec.initialPrompt).sort()).toEqual(['p0', 'p1', 'p2', 'p3']);
    expect(capReads).toBe(2); // the first start alone, the six that came while it was created in one batch
    await expect(sessions.start(project, {}, 'u1')).rejects.toMatchObject({ status: 429, message: expect.stringContaining('limit of 4 concurrent session(s)') });
  });
});

describe('SessionService.list', () => {
  it('newest first; sessions created in the same second (a burst of fires) keep one order however the store returns them', async () => {
    const session = (name: string, at: string) => ({ metadata: { name, creationTimestamp: at } }) as Session;
    const stored = [session('b', '2026-12-01T23:14:47Z'), session('old', '2026-12-01T23:11:38Z'), session('c', '2026-12-01T23:14:47Z'), session('a', '2026-12-01T23:14:47Z')];
    const listing = (order: Session[]) => new SessionService({
      store: { projectSessions: async () => [...order] } as unknown as SessionStore, mirrorDir: path.join(tmp, 'mirrors'), defaultCap: 10,
    }).list(project).then((sessions) => sessions.map((s) => s.metadata.name));
    expect(await listing(stored)).toEqual(['a', 'b', 'c', 'old']);
    expect(await listing([...stored].reverse())).toEqual(['a', 'b', 'c', 'old']);
  });
});

describe('SessionService.proxyTarget: where a running session is reached, or why not', () => {
  const target = (spec: Partial<Session['spec']>, sandboxState: string | undefined, status = 'running') => new SessionService({
    store: {
      getSession: async () => ({ metadata: { name: 's1' }, spec: { projectRef: { name: 'web' }, ...spec }, status: { status } }),
      getSandbox: async () => (sandboxState ? { status: { state: sandboxState, ...(sandboxState === 'active' ? { address: '10.0.0.2:8000' } : {}) } } : null),
      sandboxToken: async () => 'key',
    } as unknown as SessionStore,
    mirrorDir: path.join(tmp, 'mirrors'), defaultCap: 10,
  }).proxyTarget(project, 's1');

  it('its sandbox active: its address', async () => {
    expect(await target({}, 'active')).toMatchObject({ address: '10.0.0.2:8000', sandboxToken: 'key' });
  });

  it('its sandbox not up yet: 503, try again', async () => {
    await expect(target({}, 'pending')).rejects.toMatchObject({ status: 503, message: 'session s1 is running: its sandbox is not ready yet; try again shortly' });
  });

  it('its sandbox going away after a stop: 409 saying so, not a wait that never ends with an answer', async () => {
    await expect(target({ desiredState: 'stopped' }, undefined)).rejects.toMatchObject({ status: 409, message: 'session s1 is being stopped; send it a prompt (svc sessions prompt) to wake it' });
  });

  it('stopped: 409, a prompt wakes it; stopped and being woken by a prompt (wanted running): 503, its sandbox comes', async () => {
    await expect(target({ desiredState: 'stopped' }, undefined, 'stopped')).rejects.toMatchObject({ status: 409, message: 'session s1 is stopped; send it a prompt (svc sessions prompt) to wake it' });
    await expect(target({ desiredState: 'running' }, undefined, 'stopped')).rejects.toMatchObject({ status: 503, message: 'session s1 is waking: its sandbox is not ready yet; try again shortly' });
  });
});
