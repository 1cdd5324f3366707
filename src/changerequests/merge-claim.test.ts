import { describe, expect, it } from 'vitest';
import type { ChangeRequestStatus } from '../resources/index.js';
import { claimIsDead, claimIsDeadFor, newClaim, settle } from './merge-claim.js';

const me = { holder: 'api-a', instance: 'i-1' };
const T0 = new Date('2026-01-01T00:00:00Z');
const later = (ms: number) => new Date(T0.getTime() + ms);
const [H, B, M, B2] = ['h'.repeat(40), 'b'.repeat(40), 'm'.repeat(40), 'c'.repeat(40)];
const open: ChangeRequestStatus = {
  status: 'open', headCommitSha: H, baseCommitSha: B, mergedAt: null, mergedBy: null, mergeCommitSha: null,
  closedAt: null, closedBy: null, requestedChanges: [], updatedAt: T0.toISOString(),
};

describe('claimIsDead', () => {
  const claim = newClaim(me, 'user-1', H, B, T0);
  it('is alive while its holder runs it, or another live replica holds it', () => {
    expect(claimIsDead(claim, me, true, later(1000), 60_000)).toBe(false);
    expect(claimIsDead(claim, { holder: 'api-b', instance: 'i-9' }, false, later(1000), 60_000)).toBe(false);
  });
  it('is dead after the timeout, after its replica restarted, or when its own process is not running it', () => {
    expect(claimIsDead(claim, { holder: 'api-b', instance: 'i-9' }, false, later(60_001), 60_000)).toBe(true);
    expect(claimIsDead(claim, { holder: 'api-a', instance: 'i-2' }, false, later(1000), 60_000)).toBe(true);
    expect(claimIsDead(claim, me, false, later(1000), 60_000)).toBe(true);
  });
});

describe('settle', () => {
  const claimed = { ...open, mergeClaim: newClaim(me, 'user-1', H, B, T0) };
  it('records a merge found on the base with the claimer, the commits and no claim', () => {
    expect(settle(claimed, { head: H, base: M, merged: { mergeCommitSha: M, baseCommitSha: B2 } }, false, later(5))).toMatchObject({
      status: 'merged', mergedBy: 'user-1', mergeCommitSha: M, headCommitSha: H, baseCommitSha: B2, mergeClaim: null, mergedAt: later(5).toISOString(),
    });
    // a fast-forward: the base before it is the claim's
    expect(settle(claimed, { head: H, base: H, merged: { mergeCommitSha: H, baseCommitSha: null } }, false, later(5))).toMatchObject({ mergeCommitSha: H, baseCommitSha: B });
  });
  it('marks a head merged outside svc merged by nobody', () => {
    expect(settle(open, { head: H, base: M, merged: { mergeCommitSha: M, baseCommitSha: B2 } }, false, T0)).toMatchObject({ status: 'merged', mergedBy: null, mergeCommitSha: M });
  });
  it('releases a dead claim, keeps a live one, and otherwise only refreshes moved SHAs', () => {
    expect(settle(claimed, { head: H, base: B, merged: null }, true, T0)).toMatchObject({ status: 'open', mergeClaim: null });
    expect(settle(claimed, { head: H, base: B, merged: null }, false, T0)).toBeNull();
    expect(settle(claimed, { head: H, base: B2, merged: null }, false, T0)).toMatchObject({ baseCommitSha: B2, mergeClaim: claimed.mergeClaim });
    expect(settle(open, { head: H, base: B, merged: null }, false, T0)).toBeNull();
  });
});

describe('claimIsDeadFor (the ChangeRequest controller, from the replica heartbeat)', () => {
  const claim = newClaim(me, 'user-1', H, B, T0);
  const beat = (holderIdentity: string, renewedMs: number, leaseDurationSeconds = 30) => ({ holderIdentity, renewTime: later(renewedMs).toISOString(), leaseDurationSeconds });
  it.each<[string, Parameters<typeof claimIsDeadFor>[1], number, boolean]>([
    ['its process renews the heartbeat: alive', beat('i-1', 5_000), 10_000, false],
    ['the replica restarted (another instance): dead', beat('i-2', 5_000), 10_000, true],
    ['the replica stopped cleanly (released): dead', beat('', 5_000), 10_000, true],
    ['the heartbeat was not renewed in time: dead', beat('i-1', 0, 30), 31_000, true],
    ['no heartbeat: only the timeout', null, 10_000, false],
    ['no heartbeat, timed out: dead', null, 60_001, true],
  ])('%s', (_name, replica, at, dead) => {
    expect(claimIsDeadFor(claim, replica, later(at), 60_000)).toBe(dead);
  });
});
