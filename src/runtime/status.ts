/**
 * The one status gate: a status is written (through /status only) when something other than
 * the `lastTransitionTime` of its conditions changed. A transition time moves only with its
 * condition's status, so an unchanged condition never causes a write by itself.
 */
import type { ResourceClient } from '../kube/index.js';
import { jsonEqual } from '../lib/json.js';
import type { Condition, KubeObject } from '../resources/index.js';

export type WithStatus = KubeObject & { status?: object };

function withoutTransitionTimes(status: object | undefined): unknown {
  if (!status || !('conditions' in status) || !Array.isArray(status.conditions)) return status;
  return { ...status, conditions: (status.conditions as Condition[]).map(({ lastTransitionTime: _t, ...rest }) => rest) };
}

/** Whether writing `next` over `current` changes anything but condition transition times. */
export function statusChanged(current: object | undefined, next: object | undefined): boolean {
  return !jsonEqual(withoutTransitionTimes(current ?? {}), withoutTransitionTimes(next ?? {}));
}

/** obj.status with `patch`'s top-level fields over it (fields the writer does not own are kept). */
export function mergedStatus<T extends WithStatus>(obj: T, patch: NonNullable<T['status']>): NonNullable<T['status']> {
  return { ...(obj.status ?? {}), ...patch } as NonNullable<T['status']>;
}

/**
 * Merges `patch` into obj.status (top-level fields; fields the caller does not own, such as a
 * Project's change-request counter, are kept) and writes it with PUT /status when it changed.
 * The write carries obj's resourceVersion: a status computed from a stale object is a Conflict,
 * never a lost update. Returns the object as stored (obj itself when nothing was written).
 */
export async function updateStatus<T extends WithStatus>(
  client: Pick<ResourceClient<T>, 'replaceStatus'>, obj: T, patch: NonNullable<T['status']>,
): Promise<T> {
  const next = mergedStatus(obj, patch);
  if (!statusChanged(obj.status, next)) return obj;
  return client.replaceStatus({ ...obj, status: next });
}
