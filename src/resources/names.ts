import { createHash } from 'node:crypto';

/** Kubernetes object names (DNS subdomain, RFC 1123): at most 253 characters. */
export const MAX_NAME_LENGTH = 253;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function isValidName(name: string): boolean {
  return name.length <= MAX_NAME_LENGTH && DNS_SUBDOMAIN.test(name);
}

function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 10);
}

/**
 * `<parent>-<suffix>` when that is a valid object name; otherwise a sanitized, truncated form
 * ending in a hash of the exact suffix, so that two different suffixes never collide
 * (slugs may hold `_` or end in `-`, which object names may not).
 */
export function childName(parent: string, suffix: string): string {
  const plain = `${parent}-${suffix}`;
  if (isValidName(plain)) return plain;
  const hash = shortHash(suffix);
  const cleaned = suffix.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '');
  const room = MAX_NAME_LENGTH - parent.length - hash.length - 2;
  const middle = cleaned.slice(0, Math.max(0, room)).replace(/-+$/, '');
  return middle ? `${parent}-${middle}-${hash}` : `${parent}-${hash}`;
}

/** Trigger of a project: `<project>-<slug>` (hashed form when the slug is not name-safe). */
export function triggerName(projectName: string, slug: string): string {
  return childName(projectName, slug);
}

/** The Sandbox of a Session carries the Session's name. */
export function sandboxName(sessionName: string): string {
  return sessionName;
}

/** Cron fire: `<trigger>-<unix seconds of the scheduled instant>`, so a duplicate is AlreadyExists. */
export function cronFireName(triggerName: string, scheduledAt: Date): string {
  return childName(triggerName, String(Math.floor(scheduledAt.getTime() / 1000)));
}

/** Webhook or manual fire keyed by its delivery id: a redelivery maps to the same name. */
export function deliveryFireName(triggerName: string, deliveryId: string): string {
  return childName(triggerName, `d-${shortHash(deliveryId)}`);
}

/** ChangeRequest `<project>-<number>`: a second CR with one number is AlreadyExists. */
export function changeRequestName(projectName: string, number: number): string {
  return childName(projectName, String(number));
}

/** The heartbeat Lease of an API replica (holder = its SVC_POD_NAME): the ChangeRequest controller reads it to judge merge claims. */
export function apiReplicaLeaseName(holder: string): string {
  return childName('svc-api', holder.toLowerCase());
}
