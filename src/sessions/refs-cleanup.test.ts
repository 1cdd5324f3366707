import { describe, expect, it } from 'vitest';
import type { ChangeRequest, Project, Session } from '../resources/index.js';
import { REFS_CLEANUP_DEADLINE_MS, refsCleanupOverdue, sessionRefsCleanup } from './refs-cleanup.js';

const ID = '0b6c3f52-8d1e-4c55-9b1a-2f0e6f1c9a10';
const project: Project = { apiVersion: 'svc.dev/v1alpha1', kind: 'Project', metadata: { name: 'web', namespace: 'acct', uid: 'p-uid' }, spec: { repoUrl: '/srv/web', defaultBranch: 'main' } };
const session = (name = ID, deletionTimestamp?: string): Session => ({
  apiVersion: 'svc.dev/v1alpha1', kind: 'Session',
  metadata: { name, namespace: 'acct', uid: 's-uid', ...(deletionTimestamp ? { deletionTimestamp } : {}) },
  spec: { projectRef: { name: 'web' }, agent: 'default', baseRef: 'main', desiredState: 'running' },
});
function cr(number: number, over: { head?: string; base?: string; status?: 'open' | 'merged' | 'closed' | null; owner?: string } = {}): ChangeRequest {
  return {
    apiVersion: 'svc.dev/v1alpha1', kind: 'ChangeRequest',
    metadata: { name: `web-${number}`, namespace: 'acct', ownerReferences: [{ apiVersion: 'svc.dev/v1alpha1', kind: 'Project', name: 'web', uid: over.owner ?? 'p-uid', controller: true }] },
    spec: { projectRef: { name: 'web' }, number, title: 't', description: '', baseRef: over.base ?? 'main', headRef: over.head ?? ID, originSessionId: null, createdBy: 'u' },
    ...(over.status === null ? {} : { status: { status: over.status ?? 'open' } as ChangeRequest['status'] }),
  } as ChangeRequest;
}

describe('what leaves the repository with a deleted session', () => {
  it.each<[string, Session, ChangeRequest[], string]>([
    ['no change request: the branch goes', session(), [], 'delete'],
    ['merged and closed ones do not keep it', session(), [cr(1, { status: 'merged' }), cr(2, { status: 'closed' })], 'delete'],
    ["another branch's open change request does not keep it", session(), [cr(1, { head: 'feature' })], 'delete'],
    ["another project's open change request does not keep it", session(), [cr(1, { owner: 'other' })], 'delete'],
    ['an open change request from it keeps it', session(), [cr(3)], 'keep: open change request #3 uses it'],
    ['one being created (no status yet) keeps it', session(), [cr(4, { status: null })], 'keep: open change request #4 uses it'],
    ['an open change request into it keeps it', session(), [cr(5, { head: 'feature', base: ID })], 'keep: open change request #5 uses it'],
    ['a Session not named by svc (kubectl) keeps what it names', session('main'), [], 'keep: main is not a branch svc named for a session'],
  ])('%s', (_name, s, crs, expected) => {
    const plan = sessionRefsCleanup(s, project, crs);
    expect(plan.branch === 'delete' ? 'delete' : `keep: ${plan.because}`).toBe(expected);
  });

  it('never the default branch, whatever its name', () => {
    expect(sessionRefsCleanup(session(), { ...project, spec: { ...project.spec, defaultBranch: ID } }, [])).toEqual({ branch: 'keep', because: `${ID} is the project's default branch` });
  });

  it('gives up only after the deadline since the deletion started', () => {
    const started = '2026-01-01T00:00:00Z';
    expect(refsCleanupOverdue(session(ID, started), new Date(Date.parse(started) + REFS_CLEANUP_DEADLINE_MS))).toBe(false);
    expect(refsCleanupOverdue(session(ID, started), new Date(Date.parse(started) + REFS_CLEANUP_DEADLINE_MS + 1))).toBe(true);
    expect(refsCleanupOverdue(session(), new Date())).toBe(false);
  });
});
