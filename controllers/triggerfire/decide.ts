// Pure decision of the TriggerFire controller: what one fire does now, from the facts its
// reconcile observed. Session admission (src/sessions/admission.ts, the same decision that
// answered the webhook) says start, re-prompt, wait or refuse; this file turns that into the
// steps to carry out (create the Session, re-prompt the trigger's last one), the fire's status
// (fired, queued with its position, failed) and its Events. No I/O; `now` is injected.
import type { EventInput } from '../../src/kube/index.js';
import type { Outcome } from '../../src/runtime/index.js';
import {
  FIRE_ANSWER_ANNOTATION, kubeTime, promisedOwnSession, promisedSessionOf, setCondition,
  type ConditionInput, type PendingPrompt, type Project, type Session, type Trigger, type TriggerFire, type TriggerFireStatus,
} from '../../src/resources/index.js';
import { MAX_PROMPT_BYTES, admit, boundPrompt, newSession } from '../../src/sessions/index.js';
import { renderPrefix } from '../../src/triggers/index.js';

/** What one reconcile of a fire saw (and what its steps did). */
export interface FireFacts {
  trigger?: Trigger;
  project?: Project;
  /**
   * The Sessions of the namespace (the account) admission reads: those holding a slot and, for a
   * reuse trigger, the trigger's own; with the ones this controller just wrote.
   */
  sessions: readonly Session[];
  /** The fire's own session (named by it), if it exists already. */
  ownSession?: Session;
  /** The pending TriggerFires of the namespace: the queue. */
  fires: readonly TriggerFire[];
  /** The account's concurrent-session cap. */
  cap: number;
  /** Most fires of one project that may wait in the queue. */
  queueDepth: number;
  /** Set by a step: the session this reconcile created or re-prompted. */
  started?: { session: string; reprompted: boolean; woke: boolean };
  /** Set by a step: the cluster refused the Session. */
  rejected?: { reason: string; message: string };
  /** Set by a step: the failure was told on the Trigger too. */
  toldTrigger?: boolean;
}

export type FireStep =
  | { kind: 'create'; session: Session }
  | { kind: 'reprompt'; session: string; prompt: PendingPrompt; wake: boolean }
  /** A Warning on the Trigger as well, so `kubectl describe trigger` shows why its fires fail. */
  | { kind: 'tell-trigger'; reason: string; message: string };

/**
 * How soon a fire following a session not made yet looks again: a safety net, the fire that makes
 * it wakes the followers when it leaves the queue (controller.ts).
 */
export const FOLLOW_RETRY_MS = 1_000;

const isTerminalFire = (fire: TriggerFire) => fire.status?.phase === 'fired' || fire.status?.phase === 'failed';

/** Answered with a 202 (the API recorded the answer) or already waiting: it may wait, never be refused. */
export const isPromised = (fire: TriggerFire): boolean =>
  fire.metadata.annotations?.[FIRE_ANSWER_ANNOTATION] !== undefined || fire.status?.phase === 'queued';

/**
 * A 202 that named the fire's own new session is kept: that session is created, never another one
 * re-prompted in its place (a `reuse` trigger's second delivery, answered before the first one's
 * session existed, was otherwise folded into it: the session its answer named never came).
 */
export function promisedSessionMode(fire: TriggerFire, trigger: Trigger): Trigger['spec']['sessionMode'] {
  return promisedOwnSession(fire) ? 'fresh' : trigger.spec.sessionMode;
}

/** The session a 202 named for a fire that was not given its own (a reuse fire's target), if any. */
function promisedOtherSession(fire: TriggerFire): string | undefined {
  const session = promisedSessionOf(fire);
  return session !== fire.spec.sessionName ? session : undefined;
}

/** The prompt of a fire: the trigger's template rendered with the fire's variables, cut to the largest prompt. */
export function renderFirePrompt(trigger: Trigger, fire: TriggerFire): string {
  if (fire.spec.renderedPrompt !== undefined) return boundPrompt(fire.spec.renderedPrompt);
  const rendered = renderPrefix(trigger.spec.prompt, fire.spec.variables ?? {}, MAX_PROMPT_BYTES);
  return boundPrompt(rendered.text, rendered.bytes);
}

/** The Session a fresh fire creates (named by the fire's pre-assigned id). */
export function freshSession(fire: TriggerFire, trigger: Trigger, project: Project, prompt: string): Session {
  const actor = fire.spec.source === 'manual' ? fire.spec.variables?.actor : undefined;
  return newSession(project, {
    id: fire.spec.sessionName,
    agent: trigger.spec.agent,
    baseRef: project.spec.defaultBranch ?? 'main',
    model: trigger.spec.model,
    initialPrompt: prompt,
    createdBy: typeof actor === 'string' && actor ? actor : undefined,
    fired: { trigger: trigger.metadata.name!, fire: fire.metadata.name! },
  });
}

/** The pending prompt a reuse fire appends; its id names the fire, so a retry never appends twice. */
export function reusePrompt(fire: TriggerFire, text: string, now: Date): PendingPrompt {
  return { id: `fire-${fire.metadata.uid ?? fire.metadata.name}`, text, source: 'trigger', at: kubeTime(now) };
}

function ready(status: ConditionInput['status'], reason: string, message: string, generation?: number): ConditionInput {
  return { type: 'Ready', status, reason, message, ...(generation !== undefined ? { observedGeneration: generation } : {}) };
}

/** The status after `outcome`; `sessionName` is the session fired or re-prompted. */
export function fireStatus(
  fire: TriggerFire,
  outcome: { phase: 'fired'; sessionName: string; reprompted: boolean } | { phase: 'queued'; position: number; message: string } | { phase: 'failed'; reason: string; message: string },
  now: Date,
): TriggerFireStatus {
  const generation = fire.metadata.generation;
  const conditions = fire.status?.conditions;
  const base = { ...(generation !== undefined ? { observedGeneration: generation } : {}) };
  if (outcome.phase === 'fired') {
    const message = outcome.reprompted ? `re-prompted session ${outcome.sessionName}` : `created session ${outcome.sessionName}`;
    return { ...base, phase: 'fired', sessionName: outcome.sessionName, reason: undefined, queuePosition: undefined, conditions: setCondition(conditions, ready('True', 'Fired', message, generation), now) };
  }
  if (outcome.phase === 'queued') {
    return { ...base, phase: 'queued', reason: outcome.message, queuePosition: outcome.position, conditions: setCondition(conditions, ready('False', 'Queued', outcome.message, generation), now) };
  }
  return { ...base, phase: 'failed', reason: `${outcome.reason}: ${outcome.message}`, queuePosition: undefined, conditions: setCondition(conditions, ready('False', outcome.reason, outcome.message, generation), now) };
}

type FireOutcome = Outcome<TriggerFireStatus, FireStep>;

function failed(fire: TriggerFire, facts: FireFacts, reason: string, message: string, now: Date): FireOutcome {
  const tell = facts.trigger && !facts.trigger.metadata.deletionTimestamp && !facts.toldTrigger;
  if (tell) return { status: fire.status ?? {}, steps: [{ kind: 'tell-trigger', reason, message: `fire ${fire.metadata.name}: ${message}` }] };
  return { status: fireStatus(fire, { phase: 'failed', reason, message }, now), events: [{ type: 'Warning', reason, message }] };
}

function fired(fire: TriggerFire, started: NonNullable<FireFacts['started']>, now: Date): FireOutcome {
  const events: EventInput[] = fire.status?.phase === 'fired' ? [] : [{
    type: 'Normal', reason: 'Fired',
    message: started.reprompted ? `re-prompted session ${started.session}${started.woke ? ' and woke it' : ''}` : `created session ${started.session}`,
  }];
  return { status: fireStatus(fire, { phase: 'fired', sessionName: started.session, reprompted: started.reprompted }, now), events };
}

/** What the fire does now: a step to start its session, or its status (queued, fired, failed). */
export function decideFire(fire: TriggerFire, facts: FireFacts, now: Date): FireOutcome {
  if (isTerminalFire(fire) || fire.metadata.deletionTimestamp) return { status: fire.status ?? {} };
  if (facts.rejected) return failed(fire, facts, facts.rejected.reason, facts.rejected.message, now);
  if (facts.started) return fired(fire, facts.started, now);
  const { trigger, project } = facts;
  if (!trigger || trigger.metadata.deletionTimestamp) return failed(fire, facts, 'TriggerNotFound', `trigger ${fire.spec.triggerRef.name} no longer exists`, now);
  if (!project || project.metadata.deletionTimestamp) return failed(fire, facts, 'ProjectNotFound', `project ${trigger.spec.projectRef.name} does not exist or is being deleted`, now);
  // Created by an earlier attempt whose status write was lost.
  if (facts.ownSession) return fired(fire, { session: fire.spec.sessionName, reprompted: false, woke: false }, now);

  const admission = admit({
    cap: facts.cap, queueDepth: facts.queueDepth, sessions: facts.sessions, fires: facts.fires,
    request: { kind: 'fire', fire, sessionMode: promisedSessionMode(fire, trigger), promised: isPromised(fire), promisedSession: promisedOtherSession(fire) },
  });
  // rendered only when a session takes it: a waiting fire decides again at every freed slot
  switch (admission.kind) {
    case 'start':
      return { status: fire.status ?? {}, steps: [{ kind: 'create', session: freshSession(fire, trigger, project, renderFirePrompt(trigger, fire)) }] };
    case 'reprompt':
      return { status: fire.status ?? {}, steps: [{ kind: 'reprompt', session: admission.session.metadata.name!, prompt: reusePrompt(fire, renderFirePrompt(trigger, fire), now), wake: admission.wake }] };
    case 'follow':
      // The session an earlier fire of the trigger was promised is not made yet: this prompt goes there once it is.
      return { status: fire.status ?? {}, requeueAfter: FOLLOW_RETRY_MS };
    case 'queue': {
      const events: EventInput[] = fire.status?.phase === 'queued' ? [] : [{ type: 'Normal', reason: 'Queued', message: admission.reason }];
      // A safety net for a missed event: look at a waiting fire again later.
      return { status: fireStatus(fire, { phase: 'queued', position: admission.position, message: admission.reason }, now), events, requeueAfter: 30_000 };
    }
    case 'full':
      // Only a fire nobody was answered about (a cron fire) is refused; it never counts as a failed fire for the pause.
      return failed(fire, facts, 'QueueFull', `${admission.reason}; the fire is dropped`, now);
  }
}
