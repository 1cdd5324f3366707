// The merge claim (docs/change-requests.md "Merges across crashes and replicas"), pure: who may
// push a merge, when a claim is dead, and what an open CR's status becomes once the live branch
// tips and an ancestor check were observed. The API's merge takes and clears claims; the
// ChangeRequest controller settles the ones their merger left (it died, or restarted).
import type { ChangeRequestStatus, MergeClaim } from '../resources/index.js';

/** This API process: the replica's stable name and this start of it. */
export interface ClaimHolder { holder: string; instance: string }

/** A claim older than this is dead (a merge never takes that long: fetch and push time out first). */
export const DEFAULT_CLAIM_TIMEOUT_MS = 10 * 60_000;

export function newClaim(holder: ClaimHolder, by: string, headSha: string, baseSha: string, now: Date): MergeClaim {
  return { ...holder, by, headSha, baseSha, claimedAt: now.toISOString() };
}

export function isOwnClaim(claim: MergeClaim | null | undefined, holder: ClaimHolder): boolean {
  return claim?.holder === holder.holder && claim.instance === holder.instance;
}

/**
 * An API replica's heartbeat (a coordination.k8s.io Lease named apiReplicaLeaseName(holder) in
 * the API's namespace): which process of that replica runs now, and since when it is renewed.
 */
export interface ReplicaLease {
  /** The instance of the running process; empty once it stopped cleanly. */
  holderIdentity: string;
  renewTime: string | null;
  leaseDurationSeconds: number;
}

/**
 * Seen from the ChangeRequest controller: a claim is dead when it timed out, or when its
 * replica's heartbeat names another process (the replica restarted, or stopped: empty) or was
 * not renewed in time (the replica is gone). A replica without a heartbeat is judged by the
 * timeout alone.
 */
export function claimIsDeadFor(claim: MergeClaim, replica: ReplicaLease | null, now: Date, timeoutMs: number): boolean {
  if (now.getTime() - Date.parse(claim.claimedAt) > timeoutMs) return true;
  if (!replica) return false;
  if (replica.holderIdentity !== claim.instance) return true;
  const renewed = Date.parse(replica.renewTime ?? '');
  return !Number.isNaN(renewed) && now.getTime() - renewed > replica.leaseDurationSeconds * 1000;
}

/**
 * Seen from an API process: a claim is dead when it timed out, when its replica restarted since
 * (same holder, another instance), or when it is this process's own and no merge of it is running here.
 */
export function claimIsDead(claim: MergeClaim, holder: ClaimHolder, runningHere: boolean, now: Date, timeoutMs: number): boolean {
  if (now.getTime() - Date.parse(claim.claimedAt) > timeoutMs) return true;
  if (claim.holder !== holder.holder) return false;
  return claim.instance !== holder.instance || !runningHere;
}

/** What was seen of an open CR: the live tips and, when the merged head is in the base, how it got there. */
export interface Observed {
  head: string;
  base: string;
  /** From `mirror.mergeOf(base, claim head ?? head)`; null when not contained. */
  merged: { mergeCommitSha: string; baseCommitSha: string | null } | null;
}

/**
 * The next status of an open CR: `merged` when its (claimed) head is in the base (a merge whose
 * status write was lost, or one done outside svc); the claim released when dead; else the
 * refreshed SHAs. Null when nothing changes.
 */
export function settle(status: ChangeRequestStatus, seen: Observed, dead: boolean, now: Date): ChangeRequestStatus | null {
  const claim = status.mergeClaim ?? null;
  const at = now.toISOString();
  if (seen.merged) {
    return {
      ...status,
      status: 'merged',
      mergedAt: at,
      mergedBy: claim?.by ?? null, // null: merged outside svc
      mergeCommitSha: seen.merged.mergeCommitSha,
      headCommitSha: claim?.headSha ?? seen.head,
      baseCommitSha: seen.merged.baseCommitSha ?? claim?.baseSha ?? status.baseCommitSha,
      mergeClaim: null,
      updatedAt: at,
    };
  }
  const release = claim !== null && dead;
  if (!release && seen.head === status.headCommitSha && seen.base === status.baseCommitSha) return null;
  return { ...status, headCommitSha: seen.head, baseCommitSha: seen.base, ...(release ? { mergeClaim: null } : {}), updatedAt: at };
}
