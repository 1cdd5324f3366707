/**
 * The account's concurrent-session cap (SPEC §7, §8): one definition shared by the session
 * routes (429), the TriggerFire controller (queue) and `svc dev --max-sessions`.
 * Account = namespace. The Namespace annotation overrides the process-wide default.
 */
import type { ObjectIndex } from './meta.js';
import type { Session } from './session.js';

/** Namespace annotation that sets the cap of that namespace. */
export const MAX_SESSIONS_ANNOTATION = 'svc.dev/max-concurrent-sessions';
/** Env of the operator and the API that sets the default cap (chart value). */
export const MAX_SESSIONS_ENV = 'SVC_MAX_CONCURRENT_SESSIONS';
export const DEFAULT_MAX_SESSIONS = 10;

/** The default cap from the environment (a bad or missing value gives the documented default). */
export function defaultSessionCap(env: Record<string, string | undefined> = process.env): number {
  return parseCap(env[MAX_SESSIONS_ENV]) ?? DEFAULT_MAX_SESSIONS;
}

/** The cap of a namespace: its annotation when it holds a non-negative integer, else the default. */
export function sessionCap(namespaceAnnotations: Record<string, string> | undefined, fallback: number): number {
  return parseCap(namespaceAnnotations?.[MAX_SESSIONS_ANNOTATION]) ?? fallback;
}

function parseCap(value: string | undefined): number | undefined {
  if (value === undefined || !/^\s*\d+\s*$/.test(value)) return undefined;
  return Number(value.trim());
}

/** A session holds a slot while it should run and has not ended (SPEC §3.2: provisioning or running). */
export function holdsSlot(session: Pick<Session, 'spec' | 'status' | 'metadata'>): boolean {
  if (session.metadata.deletionTimestamp) return false;
  if (session.spec.desiredState === 'stopped') return false;
  const status = session.status?.status;
  return status !== 'stopped' && status !== 'failed' && status !== 'completed';
}

export function activeSessionCount(sessions: readonly Pick<Session, 'spec' | 'status' | 'metadata'>[]): number {
  return sessions.filter(holdsSlot).length;
}

/** True when starting one more session would go over the cap. */
export function capReached(sessions: readonly Pick<Session, 'spec' | 'status' | 'metadata'>[], cap: number): boolean {
  return activeSessionCount(sessions) >= cap;
}

/** The sessions of a namespace that hold a slot, by the namespace: what the cap counts per request. */
export const SLOT_HOLDERS_INDEX: ObjectIndex<Session> = {
  name: 'slot-holders',
  keys: (session) => [holdsSlot(session) ? session.metadata.namespace ?? '' : undefined],
};
