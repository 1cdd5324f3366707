import { z } from 'zod';
import { localRef, SECRET_ENV_PATTERN, SLUG_PATTERN, statusBase, timestamp } from './common.js';
import type { Resource } from './meta.js';
import { SESSION_MODES, TRIGGER_TYPES } from '../lib/trigger-kinds.js';

export { SESSION_MODES, TRIGGER_TYPES, type SessionMode, type TriggerType } from '../lib/trigger-kinds.js';
export const TriggerTypeSchema = z.enum(TRIGGER_TYPES);
export const SessionModeSchema = z.enum(SESSION_MODES);

/** A trigger entry of the manifest after normalization (aliases resolved, defaults applied; SPEC §2.5). */
export const TriggerEntrySchema = z.object({
  slug: z.string().regex(SLUG_PATTERN).describe('Unique among the project triggers (SPEC §2.1 slug pattern).'),
  type: TriggerTypeSchema.describe('cron or webhook.'),
  prompt: z.string().min(1).describe('Mustache-templated prompt of the session a fire starts.'),
  name: z.string().min(1).describe('Human label; the slug when the manifest has none.'),
  agent: z.string().min(1).default('default').describe('Agent the session is created with.'),
  model: z.string().min(1).optional().describe('Model override <provider>/<model>; resolved at fire time when absent.'),
  sessionMode: SessionModeSchema.default('fresh').describe('fresh: a new session per fire; reuse: re-prompt the last one.'),
  enabled: z.boolean().default(true).describe('When false the scheduler and the webhook receiver skip the trigger.'),
  cron: z.string().min(1).optional().describe('6-field cron expression (second minute hour day month weekday).'),
  runAt: timestamp().optional().describe('Run-once instant (RFC 3339); the trigger is dormant after it fired.'),
  timezone: z.string().min(1).default('UTC').describe('IANA zone the cron expression is read in.'),
  secretEnv: z
    .string()
    .regex(SECRET_ENV_PATTERN)
    .optional()
    .describe('Webhook only: the project secret holding the HMAC secret and the static-token fallback.'),
});
export type TriggerEntry = z.infer<typeof TriggerEntrySchema>;

export const TriggerSpecSchema = TriggerEntrySchema.extend({
  projectRef: localRef('The Project whose default-branch manifest declares this trigger.'),
})
  .superRefine((spec, ctx) => {
    if (spec.type === 'cron' && (spec.cron === undefined) === (spec.runAt === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['cron'], message: 'a cron trigger needs exactly one of cron and runAt' });
    }
    if (spec.type === 'webhook' && spec.secretEnv === undefined) {
      ctx.addIssue({ code: 'custom', path: ['secretEnv'], message: 'a webhook trigger needs secretEnv' });
    }
  })
  .describe('A trigger of the default-branch manifest, written by the Project controller.');
export type TriggerSpec = z.infer<typeof TriggerSpecSchema>;
/** What a writer must give (fields with defaults optional). */
export type TriggerSpecInput = z.input<typeof TriggerSpecSchema>;

export const TriggerStatusSchema = z
  .object({
    ...statusBase,
    lastFiredAt: timestamp().optional().describe('When the trigger last fired (SPEC last_fired_at).'),
    nextFireAt: timestamp().optional().describe('Next scheduled instant of a cron trigger.'),
    lastSessionName: z.string().optional().describe('Session started by the last fire (for sessionMode reuse).'),
    dormant: z.boolean().optional().describe('A runAt trigger that has fired; it fires no more.'),
    consecutiveFailures: z.number().int().min(0).optional().describe('Fires in a row that failed.'),
  })
  .describe('Observed state of a Trigger.');
export type TriggerStatus = z.infer<typeof TriggerStatusSchema>;

export type Trigger = Resource<TriggerSpec, TriggerStatus>;
