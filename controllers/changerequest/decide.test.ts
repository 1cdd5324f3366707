import { describe, expect, it } from 'vitest';
import { newClaim } from '../../src/changerequests/merge-claim.js';
import type { ChangeRequest, ChangeRequestStatus, Project, Session } from '../../src/resources/index.js';
import { decideChangeRequest, type ChangeRequestFacts } from './decide.js';

const NOW = new Date('2030-01-01T00:10:00Z');
const [H, B, M] = ['h'.repeat(40), 'b'.repeat(40), 'm'.repeat(40)];
const settings = { claimTimeoutMs: 600_000, feedbackTimeoutMs: 300_000 };
const project: Project = { apiVersion: 'svc.dev/v1alpha1', kind: 'Project', metadata: { name: 'web', namespace: 'ns', uid: 'p' }, spec: { repoUrl: '/r', defaultBranch: 'main' } };
const claim = newClaim({ holder: 'api-a', instance: 'i-1' }, 'user-1', H, B, new Date('2030-01-01T00:09:00Z'));
const open: ChangeRequestStatus = {
  status: 'open', headCommitSha: H, baseCommitSha: B, mergedAt: null, mergedBy: null, mergeCommitSha: null, closedAt: null, closedBy: null, requestedChanges: [],
};

function cr(status: Partial<ChangeRequestStatus> = {}, origin: string | null = 'sess-1'): ChangeRequest {
  return {
    apiVersion: 'svc.dev/v1alpha1', kind: 'ChangeRequest', metadata: { name: 'web-1', namespace: 'ns', uid: 'cr-uid' },
    spec: { projectRef: { name: 'web' }, number: 1, title: 't', description: '', baseRef: 'main', headRef: 'feature', originSessionId: origin, createdBy: 'user-1' },
    status: { ...open, ...status },
  };
}

function session(status: NonNullable<Session['status']>['status'] = 'running', pending: string[] = []): Session {
  return {
    apiVersion: 'svc.dev/v1alpha1', kind: 'Session',
    metadata: { name: 'sess-1', namespace: 'ns', annotations: pending.length ? { 'svc.dev/pending-prompts': JSON.stringify(pending.map((id) => ({ id, text: 'x', source: 'feedback', at: 'x' }))) } : {} },
    spec: { projectRef: { name: 'web' }, agent: 'a', baseRef: 'main', desiredState: 'running' },
    status: { status, ...(status === 'failed' ? { reason: 'EngineFailed' } : {}) },
  };
}

const facts = (over: Partial<ChangeRequestFacts> = {}): ChangeRequestFacts => ({ project, origin: session(), ...over });
const beat = (holderIdentity: string) => ({ holderIdentity, renewTime: '2030-01-01T00:09:55Z', leaseDurationSeconds: 30 });
const note = (text: string, at = '2030-01-01T00:09:30Z') => ({ text, by: 'user-1', at });

describe('merge claims left by their merger', () => {
  it.each<[string, Partial<ChangeRequestFacts>, Partial<ChangeRequestStatus> | null, string[]]>([
    ['its merger runs (heartbeat of its instance): nothing', { replica: beat('i-1'), tips: { head: H, base: B, merged: null } }, null, []],
    ['its merger restarted and the merge did not land: released', { replica: beat('i-2'), tips: { head: H, base: B, merged: null } }, { status: 'open', mergeClaim: null }, ['MergeClaimReleased']],
    ['its merger stopped cleanly: released', { replica: beat(''), tips: { head: H, base: B, merged: null } }, { status: 'open', mergeClaim: null }, ['MergeClaimReleased']],
    ['the merge landed (its status write was lost): merged by the claimer, Merged event', { replica: beat('i-2'), tips: { head: H, base: M, merged: { mergeCommitSha: M, baseCommitSha: B } } }, { status: 'merged', mergedBy: 'user-1', mergeCommitSha: M, mergeClaim: null }, ['Merged']],
    ['the merge landed and its merger runs: its merger records it', { replica: beat('i-1'), tips: { head: H, base: M, merged: { mergeCommitSha: M, baseCommitSha: B } } }, null, []],
    ['no heartbeat and not timed out: kept', { replica: null, tips: { head: H, base: B, merged: null } }, null, []],
    ['repository not readable now: kept (looked at again)', { replica: beat('i-2'), tips: null }, null, []],
  ])('%s', (_name, over, expected, events) => {
    const out = decideChangeRequest(cr({ mergeClaim: claim }), facts(over), settings, NOW);
    expect(out.steps ?? []).toEqual([]);
    if (expected) expect(out.status).toMatchObject(expected);
    else expect(out.status.mergeClaim).toEqual(claim);
    expect(out.events?.map((e) => e.reason)).toEqual(events);
    // a claim that stands is looked at again soon; a settled one is not
    expect(out.requeueAfter).toBe(expected === null ? 5000 : undefined);
  });

  it('the Merged event says who merged what', () => {
    const out = decideChangeRequest(cr({ mergeClaim: claim }), facts({ replica: beat('i-2'), tips: { head: H, base: H, merged: { mergeCommitSha: H, baseCommitSha: null } } }), settings, NOW);
    expect(out.events).toEqual([{ type: 'Normal', reason: 'Merged', message: `fast-forwarded feature into main at ${H.slice(0, 12)} by user-1` }]);
  });
});

describe('the originating session', () => {
  it('gone from the cache: checked live and forgotten (a step)', () => {
    expect(decideChangeRequest(cr(), facts({ origin: null }), settings, NOW).steps).toEqual([{ kind: 'forget-origin', session: 'sess-1' }]);
  });
  it('there, or never named: nothing to forget', () => {
    expect(decideChangeRequest(cr(), facts(), settings, NOW).steps ?? []).toEqual([]);
    expect(decideChangeRequest(cr({}, null), facts({ origin: undefined }), settings, NOW).steps ?? []).toEqual([]);
  });
});

describe('request-changes feedback', () => {
  const q = (index: number, at = '2030-01-01T00:09:40Z') => ({ index, state: 'queued' as const, message: 'queued on session sess-1', at });
  it('a new note is queued on the originating session (a step), then recorded queued', () => {
    const withNote = cr({ requestedChanges: [note('rename it')] });
    expect(decideChangeRequest(withNote, facts(), settings, NOW).steps).toEqual([{ kind: 'queue-feedback', session: 'sess-1', notes: [{ index: 0, promptId: 'cr-cr-uid-0', text: 'rename it' }] }]);
    const queued = decideChangeRequest(withNote, facts({ queued: { 0: { state: 'queued', message: 'queued on session sess-1' } } }), settings, NOW);
    expect(queued.status.feedback).toEqual([{ index: 0, state: 'queued', message: 'queued on session sess-1', at: NOW.toISOString() }]);
    expect(queued.requeueAfter).toBe(10_000);
  });

  it.each<[string, ChangeRequest, Partial<ChangeRequestFacts>, string, string | null]>([
    ['taken by the session: delivered', cr({ requestedChanges: [note('a')], feedback: [q(0)] }), { origin: session('running', []) }, 'delivered', 'FeedbackDelivered'],
    ['still pending: queued', cr({ requestedChanges: [note('a')], feedback: [q(0)] }), { origin: session('running', ['cr-cr-uid-0']) }, 'queued', null],
    ['still pending after the window: undelivered, stays queued on the session', cr({ requestedChanges: [note('a')], feedback: [q(0, '2030-01-01T00:04:00Z')] }), { origin: session('running', ['cr-cr-uid-0']) }, 'undelivered', 'FeedbackNotDelivered'],
    ['the session failed', cr({ requestedChanges: [note('a')], feedback: [q(0)] }), { origin: session('failed', ['cr-cr-uid-0']) }, 'undelivered', 'FeedbackNotDelivered'],
    ['no originating session', cr({ requestedChanges: [note('a')] }, null), { origin: undefined }, 'undelivered', 'FeedbackNotDelivered'],
    ['a new note for a failed session', cr({ requestedChanges: [note('a')] }), { origin: session('failed') }, 'undelivered', 'FeedbackNotDelivered'],
    ['queuing found the session gone', cr({ requestedChanges: [note('a')] }), { queued: { 0: { state: 'undelivered', message: 'session sess-1 was deleted' } } }, 'undelivered', 'FeedbackNotDelivered'],
    ['a note older than the window when first seen: closed quietly', cr({ requestedChanges: [note('a', '2030-01-01T00:00:00Z')] }), {}, 'undelivered', null],
  ])('%s', (_name, c, over, state, event) => {
    const out = decideChangeRequest(c, facts(over), settings, NOW);
    expect(out.steps ?? []).toEqual([]);
    expect(out.status.feedback?.[0]?.state).toBe(state);
    expect(out.events?.map((e) => e.reason)).toEqual(event ? [event] : []);
  });

  it('a recorded outcome stays as it is', () => {
    const done = { index: 0, state: 'delivered' as const, message: 'delivered', at: '2030-01-01T00:00:00Z' };
    const out = decideChangeRequest(cr({ requestedChanges: [note('a')], feedback: [done] }), facts(), settings, NOW);
    expect(out.status.feedback).toEqual([done]);
    expect(out.events).toEqual([]);
  });
});
