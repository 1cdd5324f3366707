// Finalizer helpers (controller-runtime's controllerutil): pure list edits plus the merge-patch
// that writes them. Finalizers are for clean-up outside the cluster only (DESIGN); owned objects
// go through owner references and the garbage collector.
import type { KubeObject } from '../resources/index.js';

export function hasFinalizer(obj: KubeObject, finalizer: string): boolean {
  return obj.metadata.finalizers?.includes(finalizer) ?? false;
}

/** The finalizer list with `finalizer` added (unchanged when present). */
export function withFinalizer(obj: KubeObject, finalizer: string): string[] {
  const list = obj.metadata.finalizers ?? [];
  return list.includes(finalizer) ? list : [...list, finalizer];
}

/** The finalizer list without `finalizer`. */
export function withoutFinalizer(obj: KubeObject, finalizer: string): string[] {
  return (obj.metadata.finalizers ?? []).filter((f) => f !== finalizer);
}

/** A merge-patch setting the finalizers; carries resourceVersion so a stale list is a Conflict, not a lost finalizer. */
export function finalizerPatch(obj: KubeObject, finalizers: string[]): object {
  return { metadata: { finalizers, resourceVersion: obj.metadata.resourceVersion } };
}
