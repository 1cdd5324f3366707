// Pure status of the Trigger controller: what the trigger's fires (and the sessions they started)
// say about it: lastFiredAt, lastSessionName, nextFireAt, dormant, consecutive failures and the
// pause after too many of them. No I/O; `now` is injected.
import {
  RESUME_ANNOTATION, cronFireName, getCondition, kubeTime, setCondition,
  type ConditionInput, type Session, type Trigger, type TriggerFire, type TriggerStatus,
} from '../../src/resources/index.js';
import { DEFAULT_CATCH_UP_MS, nextCronInstant, scheduleKey } from '../../src/triggers/index.js';

/** Failed fires in a row that pause a trigger. */
export const DEFAULT_MAX_FAILURES = 3;

/** The longest wait before looking again: an instant months or years away is approached in steps. */
export const MAX_TRIGGER_REQUEUE_MS = 5 * 60_000;

/** The wait until just after `atMs` (at least 1 s, at most MAX_TRIGGER_REQUEUE_MS). */
function requeueUntil(atMs: number, now: Date): number {
  const wait = atMs - now.getTime() + 1000;
  return Number.isFinite(wait) ? Math.min(Math.max(1000, wait), MAX_TRIGGER_REQUEUE_MS) : MAX_TRIGGER_REQUEUE_MS;
}

export interface TriggerObservation {
  trigger: Trigger;
  /** The fires the trigger owns. */
  fires: readonly TriggerFire[];
  /** Sessions of the namespace by name (to see whether a fired session failed). */
  sessions: ReadonlyMap<string, Session>;
  now: Date;
  catchUpMs?: number;
  maxFailures?: number;
}

export interface TriggerEvent { type: 'Normal' | 'Warning'; reason: string; message: string }

export interface TriggerOutcome {
  status: TriggerStatus;
  events: TriggerEvent[];
  /** When to look again (a run_at window closing, the next instant passing); undefined: on change only. */
  requeueAfterMs?: number;
}

const byFiredAt = (a: TriggerFire, b: TriggerFire) => a.spec.firedAt.localeCompare(b.spec.firedAt) || (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '');

/** Reasons of fires refused for capacity: the account, or the reused session's waiting prompts, were full; nothing is wrong with the trigger. */
const CAPACITY_REASONS = ['QueueFull', 'PromptQueueFull'];

/**
 * The outcome of one fire for the pause rule (docs/triggers.md), undefined while undecided:
 * - failed: its session failed, or the cluster refused the fire's session;
 * - succeeded: its session ran (reached running, or ended stopped or completed), or is gone;
 * - undecided: waiting in the queue, or its session is still starting (provisioning). A later
 *   fire whose session is still starting therefore never hides an earlier fire's failure.
 * A fire refused for capacity (QueueFull, PromptQueueFull) counts neither way.
 */
export function fireOutcome(fire: TriggerFire, sessions: ReadonlyMap<string, Session>): 'failed' | 'succeeded' | undefined {
  if (fire.status?.phase === 'failed') {
    const reason = fire.status.reason ?? '';
    return CAPACITY_REASONS.some((r) => reason.startsWith(`${r}:`) || reason === r) ? undefined : 'failed';
  }
  if (fire.status?.phase !== 'fired') return undefined;
  const session = sessions.get(fire.status.sessionName ?? '');
  if (!session) return 'succeeded';
  const status = session.status?.status;
  if (status === 'failed') return 'failed';
  if (status === 'running' || status === 'stopped' || status === 'completed' || session.status?.startedAt) return 'succeeded';
  return undefined;
}

function failureReason(fire: TriggerFire, sessions: ReadonlyMap<string, Session>): string {
  if (fire.status?.phase === 'failed') return fire.status.reason ?? 'the fire failed';
  const session = sessions.get(fire.status?.sessionName ?? '');
  return `session ${session?.metadata.name} failed${session?.status?.reason ? `: ${session.status.reason}` : ''}`;
}

export function nextTriggerStatus(obs: TriggerObservation): TriggerOutcome {
  const { trigger, now } = obs;
  const spec = trigger.spec;
  const catchUpMs = obs.catchUpMs ?? DEFAULT_CATCH_UP_MS;
  const maxFailures = obs.maxFailures ?? DEFAULT_MAX_FAILURES;
  const previous = trigger.status ?? {};
  const generation = trigger.metadata.generation;
  const created = trigger.metadata.creationTimestamp ?? kubeTime(now);
  const events: TriggerEvent[] = [];
  const next: TriggerStatus = { ...previous };

  // Schedule bookkeeping for the scheduler: instants before scheduleSince never fire.
  const key = scheduleKey(spec);
  if (previous.observedSchedule !== key) {
    next.observedSchedule = key;
    next.scheduleSince = previous.observedSchedule === undefined ? created : now.toISOString();
  }
  // A manifest change (new generation) or a resume starts the failure count again.
  const resumeToken = trigger.metadata.annotations?.[RESUME_ANNOTATION];
  const specChanged = previous.observedGeneration !== undefined && generation !== undefined && previous.observedGeneration !== generation;
  const resumed = resumeToken !== undefined && resumeToken !== previous.resumeToken;
  if (previous.failuresSince === undefined) next.failuresSince = created;
  if (specChanged || resumed) next.failuresSince = now.toISOString();
  if (resumeToken !== undefined) next.resumeToken = resumeToken;

  const fires = [...obs.fires].filter((f) => !f.metadata.deletionTimestamp).sort(byFiredAt);
  const last = fires.at(-1);
  // never backwards: retention deletes old fires (decide.ts), never the newest, but a person may
  if (last && !(previous.lastFiredAt && Date.parse(previous.lastFiredAt) > Date.parse(last.spec.firedAt))) next.lastFiredAt = last.spec.firedAt;
  const lastFired = fires.filter((f) => f.status?.phase === 'fired').at(-1);
  if (lastFired?.status?.sessionName) next.lastSessionName = lastFired.status.sessionName;

  // Counted in the order the fires were made, newest first, whatever order their sessions end in.
  let failures = 0;
  let lastFailure = '';
  // compared as instants: failuresSince may have second precision (a creation time), firedAt has milliseconds
  const since = Date.parse(next.failuresSince!);
  for (const fire of [...fires].reverse()) {
    if (Date.parse(fire.spec.firedAt) <= since) break;
    const outcome = fireOutcome(fire, obs.sessions);
    if (outcome === undefined) continue;
    if (outcome === 'succeeded') break;
    if (failures === 0) lastFailure = failureReason(fire, obs.sessions);
    failures += 1;
  }
  next.consecutiveFailures = failures;
  next.paused = failures >= maxFailures;

  let dormant = false;
  let requeueAfterMs: number | undefined;
  if (spec.type === 'cron' && spec.runAt !== undefined) {
    const at = Date.parse(spec.runAt);
    const fired = fires.some((f) => f.metadata.name === cronFireName(trigger.metadata.name!, new Date(at)));
    // once dormant, dormant for this schedule: its fire may since have been pruned
    const wasDormant = previous.dormant === true && previous.observedSchedule === key;
    dormant = fired || wasDormant || now.getTime() > at + catchUpMs;
    if (!dormant) requeueAfterMs = requeueUntil(at + catchUpMs, now);
  }
  next.dormant = dormant;

  const scheduled = spec.type === 'cron' && spec.enabled && !next.paused && !dormant;
  let nextFireAt: string | undefined;
  if (scheduled && spec.cron !== undefined) {
    const at = nextCronInstant(spec.cron, spec.timezone, now);
    nextFireAt = at.toISOString();
    // Refresh nextFireAt once the instant has passed (a fire of it also wakes this controller).
    requeueAfterMs = requeueUntil(at.getTime(), now);
  } else if (scheduled && spec.runAt !== undefined) {
    nextFireAt = new Date(spec.runAt).toISOString();
  }
  // undefined: no next fire, the field goes (a computed status is written whole)
  next.nextFireAt = nextFireAt;
  if (generation !== undefined) next.observedGeneration = generation;

  const condition = (type: string, status: ConditionInput['status'], reason: string, message: string): ConditionInput =>
    ({ type, status, reason, message, ...(generation !== undefined ? { observedGeneration: generation } : {}) });
  const wasPaused = getCondition(previous.conditions, 'Paused')?.status === 'True';
  let conditions = previous.conditions ?? [];
  if (next.paused) {
    const message = `paused after ${failures} failed fires in a row (last: ${lastFailure}); fix the cause, then run \`svc triggers resume ${spec.slug}\` or change the trigger in the manifest`;
    conditions = setCondition(conditions, condition('Paused', 'True', 'ConsecutiveFailures', message), now);
    conditions = setCondition(conditions, condition('Ready', 'False', 'Paused', message), now);
    if (!wasPaused) events.push({ type: 'Warning', reason: 'Paused', message });
  } else {
    conditions = setCondition(conditions, condition('Paused', 'False', 'Active', failures ? `${failures} failed fire(s) in a row; paused at ${maxFailures}` : 'no failed fires in a row'), now);
    const [reason, message] = !spec.enabled ? ['Disabled', 'enabled is false: the scheduler and the webhook receiver skip this trigger']
      // the operator does not read project secrets: whether it is set is the API's listing's (secret_configured)
      : spec.type === 'webhook' ? ['Listening', `accepts webhook deliveries signed with the project secret ${spec.secretEnv}, once it is set (409 until then: svc triggers ls --project says so)`]
        : dormant ? ['Dormant', `run_at ${spec.runAt} has ${fires.length ? 'fired' : 'passed without a fire (outside the catch-up window)'}; the trigger fires no more`]
          : ['Scheduled', spec.cron !== undefined ? `fires on ${spec.cron} (${spec.timezone}); see status.nextFireAt` : `fires once at ${spec.runAt}`];
    conditions = setCondition(conditions, condition('Ready', 'True', reason!, message!), now);
    if (wasPaused) events.push({ type: 'Normal', reason: 'Resumed', message: resumed ? 'resumed (svc.dev/resume)' : 'resumed: the failure count starts again' });
  }
  next.conditions = conditions;
  return { status: next, events, requeueAfterMs };
}
