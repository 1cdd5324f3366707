// Next fire time of a cron trigger (SPEC §2.5): 6-field expression evaluated in its IANA zone.
import type { NormalizedTrigger } from '../manifest/index.js';
import { nextCronInstant } from './schedule.js';

/** The first instant strictly after `after` at which `expression` fires in `timezone`. */
export function nextCronFire(expression: string, timezone: string, after: Date): Date {
  return nextCronInstant(expression, timezone, after);
}

/**
 * When a trigger fires next, or null when it never fires by schedule (webhook, disabled).
 * A `run_at` trigger fires once at or after its instant; before `lastFiredAt` is known, that is the instant.
 */
export function nextFire(trigger: NormalizedTrigger, after: Date, lastFiredAt?: Date): Date | null {
  if (trigger.type !== 'cron' || !trigger.enabled) return null;
  if (trigger.cron !== undefined) return nextCronFire(trigger.cron, trigger.timezone, after);
  if (trigger.run_at !== undefined) return lastFiredAt ? null : new Date(trigger.run_at);
  return null;
}
