import { z } from 'zod';
import { localRef, statusBase, timestamp } from './common.js';
import type { Resource } from './meta.js';

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
