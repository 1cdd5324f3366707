// Pure decision of the TriggerFire controller: what one fire should do now (create its Session,
// re-prompt the trigger's last session, wait in the queue, or fail), and the status that says so.
// No I/O here; `now` is injected.
import {
  API_VERSION, LABEL_PROJECT, LABEL_TRIGGER, SESSION, compareFires, controllerReference, holdsSlot, isPendingFire,
  kubeTime, setCondition,
  type ConditionInput, type PendingPrompt, type Project, type Session, type Trigger, type TriggerFire, type TriggerFireStatus,
} from '../../src/resources/index.js';
import { renderTemplate } from '../../src/triggers/index.js';

/** Annotation on a Session naming the fire that created it. */
export const FIRE_ANNOTATION = 'svc.dev/trigger-fire';

export interface FireObservation {
  fire: TriggerFire;
  trigger?: Trigger;
  project?: Project;
  /** Every Session of the namespace (the account), read live. */
  sessions: readonly Session[];
  /** Every TriggerFire of the namespace (for the queue order). */
  fires: readonly TriggerFire[];
  /** The account's concurrent-session cap. */
  cap: number;
  /** Most fires of one project that may wait in the queue. */
  queueDepth: number;
  now: Date;
}

export type FireAction =
  | { kind: 'none' }
  | { kind: 'fail'; reason: string; message: string }
  | { kind: 'queue'; position: number; message: string }
  | { kind: 'create'; session: Session }
  | { kind: 'reprompt'; session: Session; prompt: PendingPrompt; wake: boolean };

const isTerminal = (fire: TriggerFire) => fire.status?.phase === 'fired' || fire.status?.phase === 'failed';

/** The trigger's most recent session that is not dead (failed or being deleted), if any. */
export function reuseTarget(triggerName: string, sessions: readonly Session[]): Session | undefined {
  return sessions
    .filter((s) => s.metadata.labels?.[LABEL_TRIGGER] === triggerName && !s.metadata.deletionTimestamp && s.status?.status !== 'failed')
    .sort((a, b) => (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? '') || (b.metadata.name ?? '').localeCompare(a.metadata.name ?? ''))[0];
}

/** The prompt of a fire: the trigger's template rendered with the fire's variables. */
export function renderFirePrompt(trigger: Trigger, fire: TriggerFire): string {
  return fire.spec.renderedPrompt ?? renderTemplate(trigger.spec.prompt, fire.spec.variables ?? {});
}

/** The Session a fresh fire creates (named by the fire's pre-assigned id, owned by the Project). */
export function freshSession(fire: TriggerFire, trigger: Trigger, project: Project, prompt: string): Session {
  const actor = fire.spec.source === 'manual' ? fire.spec.variables?.actor : undefined;
  return {
    apiVersion: API_VERSION,
    kind: SESSION.kind,
    metadata: {
      name: fire.spec.sessionName,
      namespace: fire.metadata.namespace,
      labels: { [LABEL_PROJECT]: project.metadata.name!, [LABEL_TRIGGER]: trigger.metadata.name! },
      annotations: { [FIRE_ANNOTATION]: fire.metadata.name! },
      ownerReferences: [controllerReference(project)],
    },
    spec: {
      projectRef: { name: project.metadata.name! },
      agent: trigger.spec.agent,
      baseRef: project.spec.defaultBranch ?? 'main',
      ...(trigger.spec.model !== undefined ? { model: trigger.spec.model } : {}),
      initialPrompt: prompt,
      desiredState: 'running',
      triggerRef: { name: trigger.metadata.name! },
      ...(typeof actor === 'string' && actor ? { createdBy: actor } : {}),
    },
  };
}

/**
 * Where the fire stands in its namespace's FIFO and whether a slot is free for it: the pending
 * fires before it (in queue order) take the free slots first.
 */
export function queuePlace(obs: FireObservation): { free: boolean; position: number; projectQueued: number } {
  const pending = obs.fires.filter((f) => isPendingFire(f) && f.metadata.name !== obs.fire.metadata.name);
  const ahead = pending.filter((f) => compareFires(f, obs.fire) < 0).length;
  const slots = Math.max(0, obs.cap - obs.sessions.filter(holdsSlot).length);
  const project = obs.fire.metadata.labels?.[LABEL_PROJECT];
  const projectQueued = pending.filter((f) => f.status?.phase === 'queued' && f.metadata.labels?.[LABEL_PROJECT] === project).length;
  return { free: ahead < slots, position: ahead - slots + 1, projectQueued };
}

export function decideFire(obs: FireObservation): FireAction {
  const { fire, trigger, project } = obs;
  if (isTerminal(fire) || fire.metadata.deletionTimestamp) return { kind: 'none' };
  if (!trigger || trigger.metadata.deletionTimestamp) return { kind: 'fail', reason: 'TriggerNotFound', message: `trigger ${fire.spec.triggerRef.name} no longer exists` };
  if (!project || project.metadata.deletionTimestamp) return { kind: 'fail', reason: 'ProjectNotFound', message: `project ${trigger.spec.projectRef.name} does not exist or is being deleted` };
  const prompt = renderFirePrompt(trigger, fire);

  let target: Session | undefined;
  if (trigger.spec.sessionMode === 'reuse') {
    target = reuseTarget(trigger.metadata.name!, obs.sessions.filter((s) => s.metadata.name !== fire.spec.sessionName));
  }
  const existing = obs.sessions.find((s) => s.metadata.name === fire.spec.sessionName);
  if (existing) return { kind: 'create', session: existing }; // created by an earlier attempt
  // A running reused session already holds its slot: no capacity needed.
  if (target && holdsSlot(target)) return { kind: 'reprompt', session: target, prompt: reusePrompt(fire, prompt, obs.now), wake: false };

  const place = queuePlace(obs);
  if (!place.free) {
    if (fire.status?.phase !== 'queued' && place.projectQueued >= obs.queueDepth) {
      return { kind: 'fail', reason: 'QueueFull', message: `the queue of project ${project.metadata.name} already holds ${place.projectQueued} fire(s), its maximum; the fire is dropped` };
    }
    return { kind: 'queue', position: place.position, message: `the account's concurrent-session cap (${obs.cap}) is reached; position ${place.position} in the queue, starts when a session stops` };
  }
  if (target) return { kind: 'reprompt', session: target, prompt: reusePrompt(fire, prompt, obs.now), wake: true };
  return { kind: 'create', session: freshSession(fire, trigger, project, prompt) };
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
    return { ...base, phase: 'fired', sessionName: outcome.sessionName, conditions: setCondition(conditions, ready('True', 'Fired', message, generation), now) };
  }
  if (outcome.phase === 'queued') {
    return { ...base, phase: 'queued', reason: outcome.message, queuePosition: outcome.position, conditions: setCondition(conditions, ready('False', 'Queued', outcome.message, generation), now) };
  }
  return { ...base, phase: 'failed', reason: `${outcome.reason}: ${outcome.message}`, conditions: setCondition(conditions, ready('False', outcome.reason, outcome.message, generation), now) };
}
