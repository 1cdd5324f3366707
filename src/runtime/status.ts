/** Status writes: through /status only, and only when something other than timestamps changed. */
import type { ResourceClient } from '../kube/index.js';
import type { Condition, KubeObject } from '../resources/index.js';

type WithStatus = KubeObject & { status?: object };

/** Deep equality of JSON values; key order does not matter, undefined fields count as absent. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  }
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => jsonEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

function withoutTransitionTimes(status: object | undefined): unknown {
  if (!status || !('conditions' in status) || !Array.isArray(status.conditions)) return status;
  return { ...status, conditions: (status.conditions as Condition[]).map(({ lastTransitionTime: _t, ...rest }) => rest) };
}

/** Whether writing `next` over `current` changes anything but condition transition times. */
export function statusChanged(current: object | undefined, next: object | undefined): boolean {
  return !jsonEqual(withoutTransitionTimes(current), withoutTransitionTimes(next));
}

/**
 * Merges `patch` into obj.status (top-level fields; fields the caller does not own, such as a
 * Project's change-request counter, are kept) and writes it with PUT /status when it changed.
 * The write carries obj's resourceVersion: a status computed from a stale object is a Conflict,
 * never a lost update. Returns the object as stored (obj itself when nothing was written).
 */
export async function updateStatus<T extends WithStatus>(client: ResourceClient<T>, obj: T, patch: NonNullable<T['status']>): Promise<T> {
  const next = { ...(obj.status ?? {}), ...patch } as T['status'];
  if (!statusChanged(obj.status, next)) return obj;
  return client.replaceStatus({ ...obj, status: next });
}
