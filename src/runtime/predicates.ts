// Predicates filter the update events of a controller's own kind (controller-runtime's
// pkg/predicate): a status-only write of the controller itself does not wake it again.
// Adds, deletes and the start of a deletion always enqueue.
import { jsonEqual } from '../lib/json.js';
import type { KubeObject } from '../resources/index.js';

/** True when the update from `old` to `obj` deserves a reconcile. */
export type Predicate = (obj: KubeObject, old: KubeObject) => boolean;

/** metadata.generation moved: the spec changed (status writes do not bump it). */
export const generationChanged: Predicate = (obj, old) => obj.metadata.generation !== old.metadata.generation;
export const labelsChanged: Predicate = (obj, old) => !jsonEqual(obj.metadata.labels ?? {}, old.metadata.labels ?? {});
export const annotationsChanged: Predicate = (obj, old) => !jsonEqual(obj.metadata.annotations ?? {}, old.metadata.annotations ?? {});

/** Passes when any of `predicates` passes (a definition's list must pass all of them). */
export function anyOf(...predicates: Predicate[]): Predicate {
  return (obj, old) => predicates.some((p) => p(obj, old));
}

/** Whether an update event passes a definition's predicates (all must pass; none given: always). */
export function passes(predicates: readonly Predicate[] | undefined, obj: KubeObject, old: KubeObject | undefined): boolean {
  if (!old || !predicates?.length) return true;
  if (obj.metadata.deletionTimestamp !== old.metadata.deletionTimestamp) return true;
  if (!jsonEqual(obj.metadata.finalizers ?? [], old.metadata.finalizers ?? [])) return true;
  return predicates.every((p) => p(obj, old));
}
