// The Trigger controller's decision, pure: the trigger's status (status.ts: what its fires say,
// the pause rule) and the retention of its fires (DESIGN §8.4, docs/triggers.md "Retention"):
// which finished fires are deleted, the delivery ids to record in the delivery ledger before
// (so that a redelivery still gets its first answer for 72 h), and the ledger pages that expired.
// No I/O; `now` is injected.
import type { Outcome } from '../../src/runtime/index.js';
import {
  DELIVERY_DEDUP_MS, DELIVERY_LEDGER, LEDGER_PAGE_ENTRIES, SESSION, TRIGGER_FIRE, fireAnswer, getCondition, ledgerHour, ledgerPageExpiry, ledgerPageOf, newLedgerPage, newestSessionFirst,
  type ChangeRequest, type ConfigMapObject, type Project, type Session, type Trigger, type TriggerFire, type TriggerStatus,
} from '../../src/resources/index.js';
import { sessionRefsCleanup } from '../../src/sessions/index.js';
import { DEFAULT_MAX_FAILURES, MAX_TRIGGER_REQUEUE_MS, fireOutcome, nextTriggerStatus } from './status.js';

/** What one reconcile of a trigger observed (and what its steps wrote). */
export interface TriggerFacts {
  /** The fires the trigger owns. */
  fires: readonly TriggerFire[];
  /** The sessions those fires started or re-prompted, by name (absent: not in the cache). */
  sessions: ReadonlyMap<string, Session>;
  /** The trigger's delivery ledger pages. */
  ledger: readonly ConfigMapObject[];
  /** Session retention on (SVC_SESSION_HISTORY > 0): the sessions the trigger started, its Project and the Project's change requests. */
  started?: { sessions: readonly Session[]; project: Project | undefined; changeRequests: readonly ChangeRequest[] };
}

export interface TriggerSettings {
  catchUpMs?: number;
  maxFailures?: number;
  /** Finished fires kept per trigger (SVC_TRIGGER_FIRE_HISTORY). */
  history: number;
  /** Finished sessions kept per trigger (SVC_SESSION_HISTORY); 0 keeps every one. */
  sessionHistory?: number;
}

/** Entries to add to one ledger page; `create` when the page does not exist yet. */
export interface LedgerWrite { page: ConfigMapObject; create: boolean; entries: Record<string, string> }

export type TriggerStep = { kind: 'record-deliveries'; writes: LedgerWrite[] };

/**
 * How long a fired fire whose session the cache does not show counts as still starting: the
 * cache may lag behind the TriggerFire controller's create. After it, the session is gone.
 */
export const SESSION_CACHE_GRACE_MS = 60_000;

const newestFirst = (a: TriggerFire, b: TriggerFire) => b.spec.firedAt.localeCompare(a.spec.firedAt) || (b.metadata.name ?? '').localeCompare(a.metadata.name ?? '');

/**
 * A fire for retention: `finished` when nothing can change it any more except the outcome of a
 * session that ran (failed for good; fired with its session decided: ran, ended, failed or
 * gone); `decided` when the pause rule counts it (fireOutcome: failed or succeeded). A queued
 * fire, a fire not looked at yet and one whose session is still starting are neither.
 */
export function retentionState(fire: TriggerFire, sessions: ReadonlyMap<string, Session>, now: Date): { finished: boolean; decided: boolean } {
  const phase = fire.status?.phase;
  if (phase === 'failed') return { finished: true, decided: fireOutcome(fire, sessions) !== undefined };
  if (phase !== 'fired') return { finished: false, decided: false };
  if (!sessions.has(fire.status?.sessionName ?? '')) {
    const firedAt = Date.parse(getCondition(fire.status?.conditions, 'Ready')?.lastTransitionTime ?? fire.spec.firedAt);
    if (!(now.getTime() - firedAt >= SESSION_CACHE_GRACE_MS)) return { finished: false, decided: false };
  }
  const decided = fireOutcome(fire, sessions) !== undefined;
  return { finished: decided, decided };
}

/**
 * The fires to delete: finished fires beyond the newest `history` finished ones (at least the
 * newest: the fire instant the trigger goes on from), oldest first, except the run of failed fires
 * the pause rule is counting: from the newest decided fire, failures up to `maxFailures`, until a
 * success ends the run. So a trigger that keeps failing pauses whatever the history, and a history
 * below the failure limit is kept to (SVC_TRIGGER_FIRE_HISTORY=1 keeps one fire). The price: when
 * the session of a kept success fails later, the run it now continues was pruned, and the trigger
 * pauses on the failures still kept. Unfinished fires (queued, starting) are never deleted.
 */
export function firesToPrune(fires: readonly TriggerFire[], sessions: ReadonlyMap<string, Session>, limits: { history: number; maxFailures: number }, now: Date): TriggerFire[] {
  const history = Math.max(limits.history, 1);
  let keptFinished = 0;
  let keptFailures = 0;
  let inFailureRun = true;
  const prune: TriggerFire[] = [];
  for (const fire of fires.filter((f) => !f.metadata.deletionTimestamp).sort(newestFirst)) {
    const { finished, decided } = retentionState(fire, sessions, now);
    if (!finished) continue;
    const outcome = decided ? fireOutcome(fire, sessions) : undefined;
    if (outcome === 'succeeded') inFailureRun = false;
    const counted = inFailureRun && outcome === 'failed' && keptFailures < limits.maxFailures;
    if (keptFinished < history || counted) {
      keptFinished += 1;
      if (counted) keptFailures += 1;
      continue;
    }
    prune.push(fire);
  }
  return prune.reverse();
}

/** A session that nothing will change any more unless someone acts: failed or completed, or stopped and not being woken. */
function sessionFinished(session: Session): boolean {
  const status = session.status?.status;
  return status === 'failed' || status === 'completed' || (status === 'stopped' && session.spec.desiredState === 'stopped');
}

/**
 * The sessions a trigger started to delete (docs/sessions.md "Session history"): finished ones
 * beyond the newest `history` finished (by creation), oldest first. Never one a fire the trigger
 * keeps names (its fire list and its pause rule read it), nor one whose branch a person may still
 * need (an open change request uses it: the rule that would keep its branch, sessionRefsCleanup),
 * nor any without its Project. `history` 0 deletes nothing (DESIGN §8.4: Session objects are the record).
 */
export function sessionsToPrune(started: NonNullable<TriggerFacts['started']>, fires: readonly TriggerFire[], history: number): Session[] {
  const { project } = started;
  if (history <= 0 || !project) return [];
  const named = new Set(fires.flatMap((fire) => [fire.spec.sessionName, fire.status?.sessionName]));
  // by creation, as CronJob's history limits order Jobs by their start
  const finished = started.sessions.filter((s) => !s.metadata.deletionTimestamp && sessionFinished(s)).sort(newestSessionFirst);
  return finished
    .slice(history)
    .filter((s) => !named.has(s.metadata.name!) && sessionRefsCleanup(s, project, started.changeRequests).branch === 'delete')
    .reverse();
}

/** Whether a fire's delivery id must be in the ledger before the fire goes (it has one, less than 72 h old). */
export function needsLedgerEntry(fire: TriggerFire, now: Date): boolean {
  return fire.spec.deliveryId !== undefined && Date.parse(fire.spec.firedAt) + DELIVERY_DEDUP_MS > now.getTime();
}

/**
 * The ledger writes that record `fires` (their answers), grouped by the hour of their fire
 * instant: first into the last page of that hour while it has room, then into new pages.
 */
export function ledgerWrites(trigger: Trigger, pages: readonly ConfigMapObject[], fires: readonly TriggerFire[]): LedgerWrite[] {
  const byHour = new Map<string, TriggerFire[]>();
  for (const fire of fires) {
    const hour = ledgerHour(fire.spec.firedAt);
    byHour.set(hour, [...(byHour.get(hour) ?? []), fire]);
  }
  const writes: LedgerWrite[] = [];
  for (const [hour, group] of [...byHour].sort(([a], [b]) => a.localeCompare(b))) {
    const last = pages.map((page) => ({ page, at: ledgerPageOf(page) })).filter((p) => p.at?.hour === hour).sort((a, b) => b.at!.page - a.at!.page)[0];
    let nextPage = last ? last.at!.page + 1 : 0;
    let room = last ? LEDGER_PAGE_ENTRIES - Object.keys(last.page.data ?? {}).length : 0;
    let write: LedgerWrite | undefined = last && room > 0 ? { page: last.page, create: false, entries: {} } : undefined;
    for (const fire of group) {
      if (!write || room <= 0) {
        if (write) writes.push(write);
        write = { page: newLedgerPage(trigger, hour, nextPage, {}), create: true, entries: {} };
        nextPage += 1;
        room = LEDGER_PAGE_ENTRIES;
      }
      write.entries[fire.metadata.name!] = JSON.stringify(fireAnswer(fire));
      room -= 1;
    }
    if (write) writes.push(write);
  }
  return writes;
}

/** Status, retention and when to look again: the whole decision of one reconcile. */
export function decideTrigger(trigger: Trigger, facts: TriggerFacts, settings: TriggerSettings, now: Date): Outcome<TriggerStatus, TriggerStep> {
  const maxFailures = settings.maxFailures ?? DEFAULT_MAX_FAILURES;
  const outcome = nextTriggerStatus({ trigger, fires: facts.fires, sessions: facts.sessions, now, catchUpMs: settings.catchUpMs, maxFailures });

  const prune = firesToPrune(facts.fires, facts.sessions, { history: settings.history, maxFailures }, now);
  const recorded = (fire: TriggerFire) => facts.ledger.some((page) => page.data?.[fire.metadata.name!] !== undefined);
  const unrecorded = prune.filter((fire) => needsLedgerEntry(fire, now) && !recorded(fire));
  // the delivery ids first: a fire goes only once a redelivery can be answered without it
  if (unrecorded.length) return { status: trigger.status ?? {}, steps: [{ kind: 'record-deliveries', writes: ledgerWrites(trigger, facts.ledger, unrecorded) }] };

  const expired = facts.ledger.filter((page) => ledgerPageExpiry(page) <= now.getTime());
  const nextExpiry = Math.min(...facts.ledger.map(ledgerPageExpiry).filter((at) => at > now.getTime()));
  const untilExpiry = Number.isFinite(nextExpiry) ? Math.min(MAX_TRIGGER_REQUEUE_MS, nextExpiry - now.getTime() + 1000) : undefined;
  const requeueAfter = [outcome.requeueAfterMs, untilExpiry].filter((ms): ms is number => ms !== undefined);
  return {
    status: outcome.status,
    events: outcome.events,
    requeueAfter: requeueAfter.length ? Math.min(...requeueAfter) : undefined,
    children: [
      { type: TRIGGER_FIRE, plan: { create: [], update: [], delete: prune } },
      { type: DELIVERY_LEDGER, plan: { create: [], update: [], delete: expired } },
      ...(facts.started ? [{ type: SESSION, plan: { create: [], update: [], delete: sessionsToPrune(facts.started, facts.fires, settings.sessionHistory ?? 0) } }] : []),
    ],
  };
}
