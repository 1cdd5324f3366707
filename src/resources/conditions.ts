import { z } from 'zod';
import { clipText } from '../lib/clip.js';

/** Condition types every kind may carry; each kind adds its own. */
export const READY = 'Ready';

export const ConditionStatusSchema = z.enum(['True', 'False', 'Unknown']);
export type ConditionStatus = z.infer<typeof ConditionStatusSchema>;

/** A condition per the Kubernetes API conventions (metav1.Condition). */
export const ConditionSchema = z
  .object({
    type: z.string().min(1).describe('Type of the condition in CamelCase, e.g. Ready.'),
    status: ConditionStatusSchema.describe('True, False or Unknown.'),
    reason: z.string().describe('CamelCase reason for the last transition, for machines.'),
    message: z.string().describe('What happened and what to do about it, for people.'),
    observedGeneration: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe('metadata.generation of the object when the condition was set.'),
    lastTransitionTime: z.iso.datetime().describe('When status last changed (RFC 3339).'),
  })
  .describe('A Kubernetes-style condition.');
export type Condition = z.infer<typeof ConditionSchema>;

export const ConditionsSchema = z
  .array(ConditionSchema)
  .describe('Observations of the current state; one entry per type, a top-level Ready among them.')
  // A list keyed by type, so that server-side apply and merges treat entries by type.
  .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] });

/** A condition to set: lastTransitionTime is managed by setCondition. */
export type ConditionInput = Omit<Condition, 'lastTransitionTime'>;

/** Kubernetes timestamps: RFC 3339, second precision, UTC. */
export function kubeTime(date: Date = new Date()): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The longest condition message (metav1.Condition's maxLength): a message may quote a sandbox's own words. */
export const MAX_CONDITION_MESSAGE = 32 * 1024;

function clipMessage(message: string): string {
  return clipText(message, MAX_CONDITION_MESSAGE);
}

/**
 * Returns a new condition list with `input` set. lastTransitionTime is kept when the status
 * did not change (a reason or message update is not a transition), and set to `now` when it did.
 */
export function setCondition(conditions: readonly Condition[] | undefined, input: ConditionInput, now: Date = new Date()): Condition[] {
  const list = conditions ?? [];
  const existing = list.find((c) => c.type === input.type);
  const lastTransitionTime =
    existing && existing.status === input.status ? existing.lastTransitionTime : kubeTime(now);
  const next: Condition = { ...input, message: clipMessage(input.message), lastTransitionTime };
  if (input.observedGeneration === undefined) delete next.observedGeneration;
  return existing ? list.map((c) => (c.type === input.type ? next : c)) : [...list, next];
}

export function getCondition(conditions: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

export function isTrue(conditions: readonly Condition[] | undefined, type: string): boolean {
  return getCondition(conditions, type)?.status === 'True';
}

export function isFalse(conditions: readonly Condition[] | undefined, type: string): boolean {
  return getCondition(conditions, type)?.status === 'False';
}

export function removeCondition(conditions: readonly Condition[] | undefined, type: string): Condition[] {
  return (conditions ?? []).filter((c) => c.type !== type);
}
