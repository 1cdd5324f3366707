// The session branch push that meets a transient failure (the git host away for a moment, a
// connection cut) is tried again with backoff until the start deadline, counted from the
// Session's creation, as svc-agent waits out its clone (issue 24 §5); a permanent failure (a
// refused credential, an unknown repository, a missing base ref, a rejected push) fails the
// session at once. Pure: the attempts so far are in `status.branchRetry`.
import { DEFAULT_START_RETRY, nextStartAttempt, type StartRetryPolicy } from '../../src/lib/start-retry.js';
import type { Session, SessionStatus } from '../../src/resources/index.js';
import type { BranchOutcome } from './decide.js';

type BranchFailure = Extract<BranchOutcome, { kind: 'failed' }>;
type BranchRetry = NonNullable<SessionStatus['branchRetry']>;

/** What the session branch is, for the status: pushed, failed for good, waiting to be tried again, or not tried yet. */
export type BranchState =
  | { kind: 'pushed' }
  | { kind: 'failed'; reason: BranchFailure['reason']; message: string }
  /** `failure`: this reconcile's attempt (null: a look between two attempts) */
  | { kind: 'waiting'; retry: BranchRetry; failure: { reason: BranchFailure['reason']; message: string } | null }
  | { kind: 'pending' };

/**
 * The branch's state after this reconcile: a push that failed for a transient cause waits for
 * its next attempt while that attempt starts before the deadline; past it, the failure says the
 * step, the cause, the attempts and git's last words.
 */
export function branchState(session: Session, outcome: BranchOutcome | null, now: Date, policy: StartRetryPolicy = DEFAULT_START_RETRY): BranchState {
  const previous = session.status?.branchRetry;
  if (outcome?.kind === 'ready' || (!outcome && session.status?.baseSha)) return { kind: 'pushed' };
  if (!outcome) return previous ? { kind: 'waiting', retry: previous, failure: null } : { kind: 'pending' };
  const attempts = (previous?.attempts ?? 0) + 1;
  const created = Date.parse(session.metadata.creationTimestamp ?? '') || now.getTime();
  const next = nextStartAttempt({ step: 'session branch push', message: outcome.message, cause: outcome.cause ?? null }, attempts, created, now.getTime(), policy);
  if ('fail' in next) return { kind: 'failed', reason: outcome.reason, message: outcome.cause ? next.fail : outcome.message };
  const retry = { attempts, nextAttemptAt: new Date(now.getTime() + next.retryInMs).toISOString() };
  const message = `${outcome.message}; ${next.cause}: trying again in ${(next.retryInMs / 1000).toFixed(1)} s (attempt ${attempts}, start deadline ${Math.round(policy.deadlineMs / 1000)} s)`;
  return { kind: 'waiting', retry, failure: { reason: outcome.reason, message } };
}

/** Milliseconds until the branch push may be tried again (0: now), from the status. */
export function branchRetryInMs(session: Session, now: Date): number {
  const retry = session.status?.branchRetry;
  if (!retry || session.status?.baseSha) return 0;
  return Math.max(0, Date.parse(retry.nextAttemptAt) - now.getTime());
}
