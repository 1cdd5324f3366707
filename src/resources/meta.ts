/** The parts of Kubernetes object metadata that svc reads and writes. */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
}

/** Any Kubernetes object: what the kube client and the runtime handle generically. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

/**
 * A cache index: the values an object is found under (`keys`), by name. Registered on first use
 * (`CachedResource.indexed`, src/kube), so that a per-request read never scans a namespace.
 */
export interface ObjectIndex<T extends KubeObject = KubeObject> {
  name: string;
  keys(obj: T): readonly (string | undefined)[];
}

/** A custom resource with a spec and an optional status. */
export interface Resource<Spec, Status> extends KubeObject {
  apiVersion: string;
  kind: string;
  spec: Spec;
  status?: Status;
}

/** Owner reference that makes `owner` the controller of a child (garbage collected with it). */
export function controllerReference(owner: { apiVersion?: string; kind?: string; metadata: ObjectMeta }): OwnerReference {
  const { name, uid } = owner.metadata;
  if (!owner.apiVersion || !owner.kind || !name || !uid) {
    throw new Error('controllerReference: owner needs apiVersion, kind, metadata.name and metadata.uid');
  }
  return { apiVersion: owner.apiVersion, kind: owner.kind, name, uid, controller: true, blockOwnerDeletion: true };
}

/** The owner reference that marks the controller of `obj`, if any. */
export function controllerOf(obj: { metadata: ObjectMeta }): OwnerReference | undefined {
  return obj.metadata.ownerReferences?.find((ref) => ref.controller);
}
