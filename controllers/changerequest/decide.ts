// Pure decision of the ChangeRequest controller (the reconciling the API used to do on reads and
// on a timer): settle a merge claim its merger left (record the merge that landed, or release
// the claim) from the live tips and the claimer's heartbeat; forget an originating session that
// was deleted (SPEC §2.2); deliver request-changes notes to the originating session and say
// whether they arrived. No I/O; `now` is injected.
import type { EventInput } from '../../src/kube/index.js';
import type { Outcome } from '../../src/runtime/index.js';
import { claimIsDeadFor, settle, type Observed, type ReplicaLease } from '../../src/changerequests/merge-claim.js';
import {
  pendingPrompts,
  type ChangeRequest, type ChangeRequestStatus, type FeedbackDelivery, type Project, type Session,
} from '../../src/resources/index.js';

export interface ChangeRequestFacts {
  project: Project | null;
  /** The originating Session: undefined when the CR names none, null when it does not exist. */
  origin: Session | null | undefined;
  /** While a merge claim stands: its replica's heartbeat (null: none). */
  replica?: ReplicaLease | null;
  /** While a merge claim stands: the live tips and whether the claimed head is in the base (null: not readable now). */
  tips?: Observed | null;
  /** Step result: what queuing notes on the originating session did, by index. */
  queued?: Record<number, { state: 'queued' | 'undelivered'; message: string }>;
}

export type ChangeRequestStep =
  /** The originating Session looks gone: check it live, and set spec.originSessionId to null when it is. */
  | { kind: 'forget-origin'; session: string }
  /** Append the notes as pending prompts (source feedback) of the originating session, waking it. */
  | { kind: 'queue-feedback'; session: string; notes: { index: number; promptId: string; text: string }[] };

export interface ChangeRequestSettings {
  /** A claim older than this is dead whatever its replica says. */
  claimTimeoutMs: number;
  /** How long a queued note may wait for the session before it is reported undelivered. */
  feedbackTimeoutMs: number;
}

/** The pending prompt id of note `index` of a CR: a retry never appends it twice. */
export const feedbackPromptId = (cr: ChangeRequest, index: number) => `cr-${cr.metadata.uid}-${index}`;

/** The Merged Event of a merge recorded by the controller (the API records its own merges). */
export function mergedEvent(cr: ChangeRequest, status: ChangeRequestStatus, fastForward: boolean): EventInput {
  const how = status.mergedBy ? `by ${status.mergedBy}` : 'outside svc (its head is in the base)';
  return { type: 'Normal', reason: 'Merged', message: `${fastForward ? 'fast-forwarded' : 'merged'} ${cr.spec.headRef} into ${cr.spec.baseRef} at ${(status.mergeCommitSha ?? '').slice(0, 12)} ${how}` };
}

/**
 * Each note's delivery: new ones are queued on the session (a step), queued ones are delivered
 * once the session took them (no longer pending) and undelivered when the session is gone,
 * failed, or did not take them in time. Notes older than the delivery window when first seen
 * (written before this controller ran) are closed without an attempt.
 */
function feedback(cr: ChangeRequest, facts: ChangeRequestFacts, settings: ChangeRequestSettings, now: Date): {
  records: FeedbackDelivery[]; toQueue: { index: number; promptId: string; text: string }[]; events: EventInput[];
} {
  const at = now.toISOString();
  const notes = cr.status?.requestedChanges ?? [];
  const known = new Map((cr.status?.feedback ?? []).map((r) => [r.index, r]));
  const records: FeedbackDelivery[] = [];
  const toQueue: { index: number; promptId: string; text: string }[] = [];
  const events: EventInput[] = [];
  const sessionId = cr.spec.originSessionId;
  const who = sessionId ? `session ${sessionId}` : 'the originating session';
  const origin = facts.origin;
  // read once: the annotation may hold 192 KiB, and there may be many notes
  const waiting = new Set(origin ? pendingPrompts(origin).map((p) => p.id) : []);
  const undelivered = (index: number, message: string, quiet = false) => {
    records.push({ index, state: 'undelivered', message, at });
    if (!quiet) events.push({ type: 'Warning', reason: 'FeedbackNotDelivered', message });
  };
  notes.forEach((note, index) => {
    const record = known.get(index);
    if (record && record.state !== 'queued') { records.push(record); return; }
    const queuedNow = facts.queued?.[index];
    if (queuedNow?.state === 'undelivered') return undelivered(index, queuedNow.message);
    if (!record && !queuedNow) {
      if (now.getTime() - Date.parse(note.at) > settings.feedbackTimeoutMs) return undelivered(index, 'written before feedback delivery ran; not sent', true);
      if (!sessionId) return undelivered(index, 'the change request has no originating session');
      if (origin === null || origin?.metadata.deletionTimestamp) return undelivered(index, `session ${sessionId} was deleted`);
      if (origin?.status?.status === 'failed') return undelivered(index, `session ${sessionId} failed (${origin.status.reason ?? 'unknown'})`);
      toQueue.push({ index, promptId: feedbackPromptId(cr, index), text: note.text });
      return;
    }
    const queued: FeedbackDelivery = record ?? { index, state: 'queued', message: queuedNow!.message, at };
    if (!origin || origin.metadata.deletionTimestamp) return undelivered(index, `${who} was deleted`);
    if (origin.status?.status === 'failed') return undelivered(index, `${who} failed (${origin.status.reason ?? 'unknown'})`);
    if (!queuedNow && !waiting.has(feedbackPromptId(cr, index))) {
      records.push({ index, state: 'delivered', message: `delivered to session ${sessionId}'s root engine session`, at });
      events.push({ type: 'Normal', reason: 'FeedbackDelivered', message: `delivered to session ${sessionId}'s root engine session` });
      return;
    }
    if (now.getTime() - Date.parse(queued.at) > settings.feedbackTimeoutMs) {
      return undelivered(index, `${who} did not take the feedback within ${Math.round(settings.feedbackTimeoutMs / 1000)} s; it stays queued on the session`);
    }
    records.push(queued);
  });
  return { records, toQueue, events };
}

export function decideChangeRequest(cr: ChangeRequest, facts: ChangeRequestFacts, settings: ChangeRequestSettings, now: Date): Outcome<ChangeRequestStatus, ChangeRequestStep> {
  const status = cr.status;
  if (!status) return { status: {} as ChangeRequestStatus }; // the API writes the first status right after the create
  const waiting = (steps: ChangeRequestStep[]) => ({ status, steps });
  // SPEC §2.2: origin_session_id becomes null once that Session is deleted (the CR stays).
  if (cr.spec.originSessionId && facts.origin === null) return waiting([{ kind: 'forget-origin', session: cr.spec.originSessionId }]);

  const fb = feedback(cr, facts, settings, now);
  if (fb.toQueue.length && cr.spec.originSessionId) return waiting([{ kind: 'queue-feedback', session: cr.spec.originSessionId, notes: fb.toQueue }]);

  let next: ChangeRequestStatus = { ...status };
  const events: EventInput[] = [];
  const claim = status.status === 'open' ? status.mergeClaim ?? null : null;
  // A claim whose merger still runs is its merger's to record or release.
  if (claim && facts.tips && claimIsDeadFor(claim, facts.replica ?? null, now, settings.claimTimeoutMs)) {
    const settled = settle(status, facts.tips, true, now);
    if (settled) {
      next = settled;
      // a merge recorded here: the Project controller sees the new default branch at its next read (resync)
      if (settled.status === 'merged') {
        events.push(mergedEvent(cr, settled, facts.tips.merged!.mergeCommitSha === claim.headSha));
      } else if (!settled.mergeClaim) {
        events.push({ type: 'Normal', reason: 'MergeClaimReleased', message: `released the merge claim of ${claim.holder} (taken ${claim.claimedAt} by ${claim.by}): its merge did not land and no merge of it is running; merge again` });
      }
    }
  }
  if (fb.records.length || status.feedback?.length) next.feedback = fb.records;
  events.push(...fb.events);
  const stillClaimed = next.status === 'open' && !!next.mergeClaim;
  const waitingNotes = fb.records.some((r) => r.state === 'queued');
  return { status: next, events, requeueAfter: stillClaimed ? 5000 : waitingNotes ? 10_000 : undefined };
}
