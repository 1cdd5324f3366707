// Next fire time of a cron trigger (SPEC §2.5): 6-field expression evaluated in its IANA zone.
import { parseCron } from '../manifest/cron.js';
import type { NormalizedTrigger } from '../manifest/index.js';
import type { TriggerEntry } from '../resources/index.js';
import { triggerEntryFromManifest } from './entry.js';

/** The first instant strictly after `after` at which `expression` fires in `timezone`. */
export function nextCronFire(expression: string, timezone: string, after: Date): Date {
  return parseCron(expression, timezone, after).next().toDate();
}

const isManifestEntry = (trigger: TriggerEntry | NormalizedTrigger): trigger is NormalizedTrigger => 'session_mode' in trigger;

/**
 * When a trigger fires next, or null when it never fires by schedule (webhook, disabled).
 * A `runAt` trigger fires once at or after its instant; before `lastFiredAt` is known, that is the instant.
 * Works on the resource shape; a manifest entry (`svc triggers ls` on a local file) is converted first.
 */
export function nextFire(trigger: TriggerEntry | NormalizedTrigger, after: Date, lastFiredAt?: Date): Date | null {
  const entry = isManifestEntry(trigger) ? triggerEntryFromManifest(trigger) : trigger;
  if (entry.type !== 'cron' || !entry.enabled) return null;
  if (entry.cron !== undefined) return nextCronFire(entry.cron, entry.timezone, after);
  if (entry.runAt !== undefined) return lastFiredAt ? null : new Date(entry.runAt);
  return null;
}
