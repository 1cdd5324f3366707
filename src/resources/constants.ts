/** API group, version and the identity of every svc custom resource kind. */
export const GROUP = 'svc.dev';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;
/** The kubectl category shared by every svc kind: `kubectl get svcdev -A` lists them all. */
export const CATEGORY = 'svcdev';

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

/** What a client needs to address one resource type over REST. */
export interface ResourceType extends GroupVersionKind {
  /** URL path segment, e.g. `projects`. */
  plural: string;
  singular: string;
  namespaced: boolean;
  shortNames: readonly string[];
  /**
   * Only the objects with these labels: a cache keeps a separate informer for such a type, so
   * that a process holds its own ConfigMaps, never every ConfigMap of a namespace.
   */
  labelSelector?: string;
}

function svcKind(kind: string, plural: string, shortNames: string[]): ResourceType {
  return { group: GROUP, version: VERSION, kind, plural, singular: kind.toLowerCase(), namespaced: true, shortNames };
}

export const PROJECT = svcKind('Project', 'projects', ['proj']);
export const SESSION = svcKind('Session', 'sessions', ['sess']);
export const SANDBOX = svcKind('Sandbox', 'sandboxes', ['sbx']);
export const TRIGGER = svcKind('Trigger', 'triggers', ['trg']);
export const TRIGGER_FIRE = svcKind('TriggerFire', 'triggerfires', ['tfire']);
export const CHANGE_REQUEST = svcKind('ChangeRequest', 'changerequests', ['cr']);

export const SVC_RESOURCE_TYPES = [PROJECT, SESSION, SANDBOX, TRIGGER, TRIGGER_FIRE, CHANGE_REQUEST] as const;

/** Built-in kinds svc reads or writes. */
function builtin(group: string, version: string, kind: string, plural: string): ResourceType {
  return { group, version, kind, plural, singular: kind.toLowerCase(), namespaced: true, shortNames: [] };
}
export const SECRET = builtin('', 'v1', 'Secret', 'secrets');
export const EVENT = builtin('', 'v1', 'Event', 'events');
export const LEASE = builtin('coordination.k8s.io', 'v1', 'Lease', 'leases');
export const CONFIG_MAP = builtin('', 'v1', 'ConfigMap', 'configmaps');
export const POD = builtin('', 'v1', 'Pod', 'pods');
export const NAMESPACE: ResourceType = { ...builtin('', 'v1', 'Namespace', 'namespaces'), namespaced: false };

export function apiVersionOf(type: GroupVersionKind): string {
  return type.group ? `${type.group}/${type.version}` : type.version;
}

/** Annotation whose new value asks the Project controller to re-read the repository at once. */
export const REFRESH_ANNOTATION = 'svc.dev/refresh';
/** Finalizer for cleanup outside the cluster (sandbox processes, branches). */
export const FINALIZER = 'svc.dev/cleanup';
/** Labels set on children so that they can be listed by parent. Values are label-safe names. */
export const LABEL_PROJECT = 'svc.dev/project';
export const LABEL_TRIGGER = 'svc.dev/trigger';
export const LABEL_SESSION = 'svc.dev/session';
/** On a kubernetes-provider sandbox's Pod and Secret: the Sandbox's name. */
export const LABEL_SANDBOX = 'svc.dev/sandbox';
export const CUSTOM_RESOURCE_DEFINITION: ResourceType = {
  ...builtin('apiextensions.k8s.io', 'v1', 'CustomResourceDefinition', 'customresourcedefinitions'),
  namespaced: false,
};
