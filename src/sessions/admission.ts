// Session admission (issue 19 §1): may a session start now, and is a trigger fire started,
// re-prompting a session, queued, or refused. One pure decision with three callers: the session
// route (`full` is its 429), the webhook and manual fire answer (the 202 body, or 429), and the
// TriggerFire controller (which keeps that answer: a fire that was answered is never refused).
// The account is the namespace; its cap and queue are SPEC §7 and docs/triggers.md.
import {
  LABEL_PROJECT, LABEL_TRIGGER, compareFires, holdsSlot, isPendingFire, newestSessionFirst, promisedOwnSession,
  type Session, type SessionMode, type TriggerFire,
} from '../resources/index.js';

/** A new interactive session (POST .../sessions): it starts or is refused, it never queues. */
export interface SessionRequest { kind: 'session' }

/** A trigger fire: its place in the namespace's FIFO (compareFires) and what it would start. */
export interface FireRequest {
  kind: 'fire';
  /** The fire; a new one not stored yet has no creationTimestamp (it queues last among fires of its instant). */
  fire: Pick<TriggerFire, 'metadata' | 'spec'>;
  sessionMode: SessionMode;
  /**
   * The fire was answered (a 202 was given): it may wait, never be refused. A fire nobody was
   * told about yet (a new webhook delivery, a cron fire) is refused beyond the queue depth.
   */
  promised: boolean;
  /** The session the fire's 202 named when it was not the fire's own (a reuse target): it is kept to, also before it exists. */
  promisedSession?: string;
}

export type AdmissionRequest = SessionRequest | FireRequest;

export interface AdmissionInput {
  /** The account's concurrent-session cap. */
  cap: number;
  /** Most fires of one project that may wait for a slot. */
  queueDepth: number;
  /**
   * The Sessions of the account, including ones this process created that its cache lacks. Only
   * those holding a slot count, and a reuse fire's trigger's own: callers pass just these (an
   * index each), never every session of the account.
   */
  sessions: readonly Session[];
  /**
   * The TriggerFires of the account, including this process's unseen ones: only the pending ones
   * (the queue) count, and callers pass just these (an index).
   */
  fires: readonly Pick<TriggerFire, 'metadata' | 'spec' | 'status'>[];
  request: AdmissionRequest;
}

export type Admission =
  /** Start a new session now. */
  | { kind: 'start' }
  /** Append the fire's prompt to the trigger's last session (`wake`: it was stopped and takes a slot). */
  | { kind: 'reprompt'; session: Session; wake: boolean }
  /**
   * A reuse fire behind an earlier fire of its trigger that was promised a new session not made
   * yet: the fire's prompt goes to that session (`session`, its name) once it exists.
   */
  | { kind: 'follow'; session: string }
  /** Wait: `position` 1 starts next. */
  | { kind: 'queue'; position: number; reason: string }
  /** Refused: the cap (a session) or the project's queue (a fire) is full. */
  | { kind: 'full'; reason: string };

/**
 * The trigger's most recent session that is not dead (failed or being deleted): what a `reuse`
 * fire re-prompts. Ties on creation time go to the greater name, so every caller picks the same.
 */
export function reuseTarget(triggerName: string, sessions: readonly Session[]): Session | undefined {
  return sessions
    .filter((s) => s.metadata.labels?.[LABEL_TRIGGER] === triggerName && !s.metadata.deletionTimestamp && s.status?.status !== 'failed')
    .sort(newestSessionFirst)[0];
}

/**
 * The newest session a reuse trigger was promised and does not have yet: a pending fire of the
 * trigger (other than `self`) answered with its own new session, which is not among `sessions`.
 * A reuse fire after it follows it instead of starting a second session, so a burst of deliveries
 * makes one session. With `only` (the session a fire's 202 named), that one or none.
 */
export function comingSession(
  triggerName: string, fires: AdmissionInput['fires'], sessions: readonly Session[], self: string | undefined, only?: string,
): string | undefined {
  const made = new Set(sessions.map((s) => s.metadata.name));
  const coming = fires
    .filter((f) => isPendingFire(f) && f.metadata.name !== self && (f.metadata.labels?.[LABEL_TRIGGER] ?? f.spec.triggerRef.name) === triggerName)
    .filter((f) => promisedOwnSession(f) && !made.has(f.spec.sessionName))
    .sort(compareFires);
  if (only !== undefined) return coming.some((f) => f.spec.sessionName === only) ? only : undefined;
  return coming.at(-1)?.spec.sessionName;
}

/** Slots of the cap not held by a session (never negative). */
export function freeSlots(cap: number, sessions: readonly Session[]): number {
  return Math.max(0, cap - sessions.filter(holdsSlot).length);
}

export function admit(input: AdmissionInput): Admission {
  const { cap, request } = input;
  if (request.kind === 'session') {
    if (freeSlots(cap, input.sessions) > 0) return { kind: 'start' };
    return { kind: 'full', reason: `the account has reached its limit of ${cap} concurrent session(s): stop one (svc sessions stop ID) and try again` };
  }
  const fire = request.fire;
  const name = fire.metadata.name;
  const triggerName = fire.metadata.labels?.[LABEL_TRIGGER] ?? fire.spec.triggerRef.name;
  if (request.sessionMode === 'reuse') {
    const coming = comingSession(triggerName, input.fires, input.sessions, name, request.promisedSession);
    if (coming) return { kind: 'follow', session: coming };
  }
  const target = request.sessionMode === 'reuse'
    ? reuseTarget(triggerName, input.sessions.filter((s) => s.metadata.name !== fire.spec.sessionName))
    : undefined;
  // A running reused session already holds its slot: no capacity needed.
  if (target && holdsSlot(target)) return { kind: 'reprompt', session: target, wake: false };

  // FIFO: the pending fires before this one take the free slots first.
  const queue = input.fires.filter((f) => isPendingFire(f) && f.metadata.name !== name);
  const ahead = queue.filter((f) => compareFires(f, fire) < 0).length;
  const slots = freeSlots(cap, input.sessions);
  if (ahead < slots) return target ? { kind: 'reprompt', session: target, wake: true } : { kind: 'start' };

  const position = ahead - slots + 1;
  const project = fire.metadata.labels?.[LABEL_PROJECT];
  if (!request.promised) {
    // Fires of the project that cannot start now: the ones past the free slots (in queue order).
    const waiting = queue.sort(compareFires).slice(slots).filter((f) => f.metadata.labels?.[LABEL_PROJECT] === project).length;
    if (waiting >= input.queueDepth) {
      return { kind: 'full', reason: `the queue of project ${project} is full (${input.queueDepth} fires wait for the concurrent-session cap of ${cap})` };
    }
  }
  return { kind: 'queue', position, reason: `the account's concurrent-session cap (${cap}) is reached; position ${position} in the queue, starts when a session stops` };
}
