/**
 * The one status gate: a status is written (through /status only) when something other than
 * the `lastTransitionTime` of its conditions changed. A transition time moves only with its
 * condition's status, so an unchanged condition never causes a write by itself.
 *
 * How a field goes away: a controller's computed status is the whole status (`Outcome.status`,
 * started from the object's own), written as it is, so a field it leaves out (or deletes) is
 * removed. Only `updateStatus`, for writers outside a controller, merges a patch over the stored
 * status (there a field set to undefined is removed, one left out is kept).
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

/**
 * Merges `patch` into obj.status (top-level fields; fields the caller does not own, such as a
 * Project's change-request counter, are kept) and writes it with PUT /status when it changed.
 * The write carries obj's resourceVersion: a status computed from a stale object is a Conflict,
 * never a lost update. Returns the object as stored (obj itself when nothing was written).
 */
export async function updateStatus<T extends WithStatus>(
  client: Pick<ResourceClient<T>, 'replaceStatus'>, obj: T, patch: NonNullable<T['status']>,
): Promise<T> {
  const next = { ...(obj.status ?? {}), ...patch } as NonNullable<T['status']>;
  if (!statusChanged(obj.status, next)) return obj;
  return client.replaceStatus({ ...obj, status: next });
}
