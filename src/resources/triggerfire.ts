import { z } from 'zod';
import { localRef, statusBase, timestamp } from './common.js';
import { API_VERSION, LABEL_PROJECT, LABEL_TRIGGER, TRIGGER_FIRE } from './constants.js';
import { controllerReference, type ObjectIndex, type Resource } from './meta.js';
import type { Trigger } from './trigger.js';

export const FIRE_SOURCES = ['cron', 'webhook', 'manual'] as const;
export const FireSourceSchema = z.enum(FIRE_SOURCES);
export type FireSource = z.infer<typeof FireSourceSchema>;

export const FIRE_PHASES = ['fired', 'queued', 'failed'] as const;
export const FirePhaseSchema = z.enum(FIRE_PHASES);
export type FirePhase = z.infer<typeof FirePhaseSchema>;

export const TriggerFireSpecSchema = z
  .object({
    triggerRef: localRef('The Trigger that fired.'),
    source: FireSourceSchema.describe('What fired it: cron, webhook or manual.'),
    firedAt: timestamp().describe('The fire instant (for cron, the scheduled instant).'),
    variables: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('Template variables of the fire (SPEC §6), rendered into the prompt by the controller.'),
    renderedPrompt: z.string().optional().describe('The prompt, when rendered by the writer.'),
    sessionName: z.string().min(1).describe('Pre-assigned session id (UUID): the Session this fire creates.'),
    deliveryId: z.string().optional().describe('Webhook delivery id, for idempotent redelivery.'),
  })
  .describe('One fire of a trigger.');
export type TriggerFireSpec = z.infer<typeof TriggerFireSpecSchema>;
/** What a writer must give (fields with defaults optional). */
export type TriggerFireSpecInput = z.input<typeof TriggerFireSpecSchema>;

export const TriggerFireStatusSchema = z
  .object({
    ...statusBase,
    phase: FirePhaseSchema.optional().describe('fired, queued (waiting for capacity) or failed.'),
    reason: z.string().optional().describe('Why the fire is queued or failed.'),
    queuePosition: z.number().int().min(0).optional().describe('Position in the queue while queued.'),
    sessionName: z.string().optional().describe('The Session the fire started (fresh) or re-prompted (reuse).'),
  })
  .describe('Observed state of a TriggerFire.');
export type TriggerFireStatus = z.infer<typeof TriggerFireStatusSchema>;

export type TriggerFire = Resource<TriggerFireSpec, TriggerFireStatus>;

/** Annotation holding the 202 answer given for a webhook or manual fire, so that a redelivery gets the same one. */
export const FIRE_ANSWER_ANNOTATION = 'svc.dev/answer';

/** The 202 body of a webhook or manual fire (SPEC §4.2). */
export type FireAnswer = { status: 'fired'; session_id: string } | { status: 'queued'; reason: string };

/** A recorded answer (the annotation, or a delivery ledger entry), undefined when it is not one. */
export function parseFireAnswer(text: string | undefined): FireAnswer | undefined {
  try {
    const parsed = JSON.parse(text ?? '') as Partial<Record<string, unknown>>;
    if (parsed.status === 'fired' && typeof parsed.session_id === 'string') return { status: 'fired', session_id: parsed.session_id };
    if (parsed.status === 'queued' && typeof parsed.reason === 'string') return { status: 'queued', reason: parsed.reason };
  } catch { /* not an answer */ }
  return undefined;
}

/** The session a fire's 202 named (its own new one, or the one it re-prompts); undefined when it was queued or not answered. */
export function promisedSessionOf(fire: Pick<TriggerFire, 'metadata'>): string | undefined {
  const answer = parseFireAnswer(fire.metadata.annotations?.[FIRE_ANSWER_ANNOTATION]);
  return answer?.status === 'fired' ? answer.session_id : undefined;
}

/** The fire was answered with a session of its own (a 202 naming its pre-assigned new session), not a re-prompt or a place in the queue. */
export function promisedOwnSession(fire: Pick<TriggerFire, 'metadata' | 'spec'>): boolean {
  return promisedSessionOf(fire) === fire.spec.sessionName;
}

/** The answer a fire was given (its annotation), else what its status says (a fire written by someone else). */
export function fireAnswer(fire: TriggerFire): FireAnswer {
  const recorded = parseFireAnswer(fire.metadata.annotations?.[FIRE_ANSWER_ANNOTATION]);
  if (recorded) return recorded;
  return fire.status?.phase === 'queued' ? { status: 'queued', reason: fire.status.reason ?? 'queued' } : { status: 'fired', session_id: fire.status?.sessionName ?? fire.spec.sessionName };
}

export interface NewFireInput {
  /** Object name: cronFireName, deliveryFireName, or childName(trigger, <unique>). */
  name: string;
  source: FireSource;
  firedAt: Date;
  variables: Record<string, unknown>;
  /** Pre-assigned session id (a UUID v4). */
  sessionName: string;
  deliveryId?: string;
  annotations?: Record<string, string>;
}

/** A TriggerFire owned by `trigger` (garbage collected with it), labelled with its project and trigger. */
export function newTriggerFire(trigger: Trigger, input: NewFireInput): TriggerFire {
  return {
    apiVersion: API_VERSION,
    kind: TRIGGER_FIRE.kind,
    metadata: {
      name: input.name,
      namespace: trigger.metadata.namespace,
      labels: { [LABEL_PROJECT]: trigger.spec.projectRef.name, [LABEL_TRIGGER]: trigger.metadata.name! },
      ...(input.annotations ? { annotations: input.annotations } : {}),
      ownerReferences: [controllerReference(trigger)],
    },
    spec: {
      triggerRef: { name: trigger.metadata.name! },
      source: input.source,
      firedAt: input.firedAt.toISOString(),
      variables: input.variables,
      sessionName: input.sessionName,
      ...(input.deliveryId !== undefined ? { deliveryId: input.deliveryId } : {}),
    },
  };
}

/** Env of the API and the operator: how many fires of one project may wait at the cap. */
export const FIRE_QUEUE_DEPTH_ENV = 'SVC_TRIGGER_QUEUE_DEPTH';
export const DEFAULT_FIRE_QUEUE_DEPTH = 100;

export function fireQueueDepth(env: Record<string, string | undefined> = process.env): number {
  const value = env[FIRE_QUEUE_DEPTH_ENV];
  return value !== undefined && /^\s*\d+\s*$/.test(value) ? Number(value.trim()) : DEFAULT_FIRE_QUEUE_DEPTH;
}

/** A fire not yet fired or failed: it waits in (or is about to enter) the queue. */
export function isPendingFire(fire: Pick<TriggerFire, 'status' | 'metadata'>): boolean {
  return !fire.metadata.deletionTimestamp && (fire.status?.phase === undefined || fire.status.phase === 'queued');
}

/** The pending fires of a namespace (the queue), by the namespace: what admission reads per request. */
export const PENDING_FIRES_INDEX: ObjectIndex<TriggerFire> = {
  name: 'pending-fires',
  keys: (fire) => [isPendingFire(fire) ? fire.metadata.namespace ?? '' : undefined],
};

/** Env of the operator: how many finished fires of one trigger are kept (DESIGN §8.4). */
export const FIRE_HISTORY_ENV = 'SVC_TRIGGER_FIRE_HISTORY';
export const DEFAULT_FIRE_HISTORY = 100;
/** Env of the operator: how many finished sessions one trigger started are kept; 0 (the default) keeps every one (docs/sessions.md "Session history"). */
export const SESSION_HISTORY_ENV = 'SVC_SESSION_HISTORY';

/** Code-unit order (what ISO instants and object names need; localeCompare costs far more per call). */
const order = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Queue order (FIFO): fire instant, then creation, then name. */
export function compareFires(a: Pick<TriggerFire, 'spec' | 'metadata'>, b: Pick<TriggerFire, 'spec' | 'metadata'>): number {
  return order(a.spec.firedAt, b.spec.firedAt)
    || order(a.metadata.creationTimestamp ?? '', b.metadata.creationTimestamp ?? '')
    || order(a.metadata.name ?? '', b.metadata.name ?? '');
}
