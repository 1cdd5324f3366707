// The resource types the server knows: built-in kinds (stored without a schema) and the
// kinds CustomResourceDefinitions register. Also answers the discovery endpoints.
import type { JsonSchema } from './schema.js';
import type { KObject } from './status.js';

export interface PrinterColumn { name: string; type: string; jsonPath: string; format?: string; description?: string; priority?: number }

export interface ResourceType {
  group: string;
  version: string;
  plural: string;
  singular: string;
  kind: string;
  namespaced: boolean;
  shortNames: string[];
  categories: string[];
  /** Built-ins keep every field on the main resource; custom resources with a status subresource do not. */
  builtin: boolean;
  hasStatus: boolean;
  /** Access reviews: create-only, answered (always allowed: there is no authorization) and not stored. */
  review?: boolean;
  schema?: JsonSchema;
  printerColumns?: PrinterColumn[];
}

export const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

/** Objects of every version of one resource share one store: keyed by group and plural. */
export function storeId(t: { group: string; plural: string }): string {
  return `${t.group}/${t.plural}`;
}

export function apiVersionOf(t: { group: string; version: string }): string {
  return t.group ? `${t.group}/${t.version}` : t.version;
}

// [groupVersion, plural, kind, namespaced, shortNames, categories]
type BuiltinRow = [string, string, string, boolean, string[]?, string[]?];
const ALL = ['all'];
const BUILTINS: BuiltinRow[] = [
  ['v1', 'namespaces', 'Namespace', false, ['ns']],
  ['v1', 'configmaps', 'ConfigMap', true, ['cm']],
  ['v1', 'secrets', 'Secret', true],
  ['v1', 'pods', 'Pod', true, ['po'], ALL],
  ['v1', 'podtemplates', 'PodTemplate', true],
  ['v1', 'services', 'Service', true, ['svc'], ALL],
  ['v1', 'serviceaccounts', 'ServiceAccount', true, ['sa']],
  ['v1', 'endpoints', 'Endpoints', true, ['ep']],
  ['v1', 'events', 'Event', true, ['ev']],
  ['v1', 'persistentvolumeclaims', 'PersistentVolumeClaim', true, ['pvc']],
  ['v1', 'persistentvolumes', 'PersistentVolume', false, ['pv']],
  ['v1', 'nodes', 'Node', false, ['no']],
  ['v1', 'replicationcontrollers', 'ReplicationController', true, ['rc'], ALL],
  ['v1', 'resourcequotas', 'ResourceQuota', true, ['quota']],
  ['v1', 'limitranges', 'LimitRange', true, ['limits']],
  ['apps/v1', 'deployments', 'Deployment', true, ['deploy'], ALL],
  ['apps/v1', 'replicasets', 'ReplicaSet', true, ['rs'], ALL],
  ['apps/v1', 'statefulsets', 'StatefulSet', true, ['sts'], ALL],
  ['apps/v1', 'daemonsets', 'DaemonSet', true, ['ds'], ALL],
  ['apps/v1', 'controllerrevisions', 'ControllerRevision', true],
  ['batch/v1', 'jobs', 'Job', true, [], ALL],
  ['batch/v1', 'cronjobs', 'CronJob', true, ['cj'], ALL],
  ['autoscaling/v2', 'horizontalpodautoscalers', 'HorizontalPodAutoscaler', true, ['hpa'], ALL],
  ['coordination.k8s.io/v1', 'leases', 'Lease', true],
  ['events.k8s.io/v1', 'events', 'Event', true, ['ev']],
  ['policy/v1', 'poddisruptionbudgets', 'PodDisruptionBudget', true, ['pdb']],
  ['networking.k8s.io/v1', 'ingresses', 'Ingress', true, ['ing']],
  ['networking.k8s.io/v1', 'ingressclasses', 'IngressClass', false],
  ['networking.k8s.io/v1', 'networkpolicies', 'NetworkPolicy', true, ['netpol']],
  ['rbac.authorization.k8s.io/v1', 'roles', 'Role', true],
  ['rbac.authorization.k8s.io/v1', 'rolebindings', 'RoleBinding', true],
  ['rbac.authorization.k8s.io/v1', 'clusterroles', 'ClusterRole', false],
  ['rbac.authorization.k8s.io/v1', 'clusterrolebindings', 'ClusterRoleBinding', false],
  ['scheduling.k8s.io/v1', 'priorityclasses', 'PriorityClass', false, ['pc']],
  ['storage.k8s.io/v1', 'storageclasses', 'StorageClass', false, ['sc']],
  ['admissionregistration.k8s.io/v1', 'validatingwebhookconfigurations', 'ValidatingWebhookConfiguration', false],
  ['admissionregistration.k8s.io/v1', 'mutatingwebhookconfigurations', 'MutatingWebhookConfiguration', false],
  ['apiextensions.k8s.io/v1', 'customresourcedefinitions', 'CustomResourceDefinition', false, ['crd', 'crds']],
];

const REVIEWS: [string, string, boolean][] = [
  ['selfsubjectaccessreviews', 'SelfSubjectAccessReview', false],
  ['selfsubjectrulesreviews', 'SelfSubjectRulesReview', false],
  ['subjectaccessreviews', 'SubjectAccessReview', false],
  ['localsubjectaccessreviews', 'LocalSubjectAccessReview', true],
];

function builtinTypes(): ResourceType[] {
  const types: ResourceType[] = BUILTINS.map(([gv, plural, kind, namespaced, shortNames = [], categories = []]) => {
    const [group, version] = gv.includes('/') ? (gv.split('/') as [string, string]) : ['', gv];
    return { group, version, plural, singular: kind.toLowerCase(), kind, namespaced, shortNames, categories, builtin: true, hasStatus: true };
  });
  for (const [plural, kind, namespaced] of REVIEWS) {
    types.push({ group: 'authorization.k8s.io', version: 'v1', plural, singular: '', kind, namespaced, shortNames: [], categories: [], builtin: true, hasStatus: false, review: true });
  }
  return types;
}

export const CRD_GROUP = 'apiextensions.k8s.io';

/** Orders Kubernetes versions as the server does: GA > beta > alpha, then by number. */
export function compareKubeVersions(a: string, b: string): number {
  const rank = (v: string): [number, number, number] => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return [0, 0, 0];
    const stage = m[2] === undefined ? 3 : m[2] === 'beta' ? 2 : 1;
    return [stage, Number(m[1]), Number(m[3] ?? 0)];
  };
  const [ra, rb] = [rank(a), rank(b)];
  for (let i = 0; i < 3; i++) if (ra[i] !== rb[i]) return rb[i]! - ra[i]!;
  return a.localeCompare(b);
}

export class Registry {
  /** "group/version" -> plural -> type */
  private byGroupVersion = new Map<string, Map<string, ResourceType>>();
  /** CRD name -> the types it registered */
  private byCrd = new Map<string, ResourceType[]>();

  constructor() {
    for (const t of builtinTypes()) this.add(t);
  }

  private add(t: ResourceType): void {
    const gv = apiVersionOf(t);
    let m = this.byGroupVersion.get(gv);
    if (!m) this.byGroupVersion.set(gv, (m = new Map()));
    m.set(t.plural, t);
  }

  lookup(group: string, version: string, plural: string): ResourceType | undefined {
    return this.byGroupVersion.get(group ? `${group}/${version}` : version)?.get(plural);
  }

  groupVersions(): string[] {
    return [...this.byGroupVersion.keys()];
  }

  typesOf(groupVersion: string): ResourceType[] {
    return [...(this.byGroupVersion.get(groupVersion)?.values() ?? [])];
  }

  hasGroupVersion(group: string, version: string): boolean {
    return this.byGroupVersion.has(group ? `${group}/${version}` : version);
  }

  /** Registers (or re-registers) the served versions of a CRD. */
  registerCrd(crd: KObject): void {
    this.unregisterCrd(crd.metadata!.name!);
    const spec = crd.spec as CrdSpec;
    const types: ResourceType[] = [];
    for (const v of spec.versions ?? []) {
      if (v.served === false) continue;
      types.push({
        group: spec.group,
        version: v.name,
        plural: spec.names.plural,
        singular: spec.names.singular || spec.names.kind.toLowerCase(),
        kind: spec.names.kind,
        namespaced: spec.scope !== 'Cluster',
        shortNames: spec.names.shortNames ?? [],
        categories: spec.names.categories ?? [],
        builtin: false,
        hasStatus: v.subresources?.status !== undefined,
        schema: v.schema?.openAPIV3Schema,
        printerColumns: v.additionalPrinterColumns,
      });
    }
    for (const t of types) this.add(t);
    this.byCrd.set(crd.metadata!.name!, types);
  }

  unregisterCrd(name: string): void {
    for (const t of this.byCrd.get(name) ?? []) {
      const gv = apiVersionOf(t);
      const m = this.byGroupVersion.get(gv);
      m?.delete(t.plural);
      if (m?.size === 0) this.byGroupVersion.delete(gv);
    }
    this.byCrd.delete(name);
  }

  /** Groups with their versions, preferred first. The core group ("") is left out: it lives at /api. */
  private groups(): Map<string, string[]> {
    const groups = new Map<string, string[]>();
    for (const gv of this.byGroupVersion.keys()) {
      if (!gv.includes('/')) continue;
      const [g, v] = gv.split('/') as [string, string];
      groups.set(g, [...(groups.get(g) ?? []), v]);
    }
    for (const versions of groups.values()) versions.sort(compareKubeVersions);
    return groups;
  }

  apiGroup(name: string): KObject | undefined {
    const versions = this.groups().get(name);
    return versions && groupBody(name, versions);
  }

  apiGroupList(): KObject {
    const groups = [...this.groups()].sort(([a], [b]) => a.localeCompare(b)).map(([g, vs]) => groupBody(g, vs));
    return { kind: 'APIGroupList', apiVersion: 'v1', groups };
  }

  resourceList(group: string, version: string): KObject | undefined {
    const gv = group ? `${group}/${version}` : version;
    const types = this.byGroupVersion.get(gv);
    if (!types) return undefined;
    const resources: Record<string, unknown>[] = [];
    for (const t of [...types.values()].sort((a, b) => a.plural.localeCompare(b.plural))) {
      const entry: Record<string, unknown> = { name: t.plural, singularName: t.singular, namespaced: t.namespaced, kind: t.kind, verbs: t.review ? ['create'] : ALL_VERBS };
      if (t.shortNames.length) entry.shortNames = t.shortNames;
      if (t.categories.length) entry.categories = t.categories;
      resources.push(entry);
      if (t.hasStatus) resources.push({ name: `${t.plural}/status`, singularName: '', namespaced: t.namespaced, kind: t.kind, verbs: ['get', 'patch', 'update'] });
    }
    return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: gv, resources };
  }
}

function groupBody(name: string, versions: string[]): KObject {
  const vs = versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
  return { kind: 'APIGroup', apiVersion: 'v1', name, versions: vs, preferredVersion: vs[0] };
}

export interface CrdVersion {
  name: string;
  served?: boolean;
  storage?: boolean;
  schema?: { openAPIV3Schema?: JsonSchema };
  subresources?: { status?: object; scale?: object };
  additionalPrinterColumns?: PrinterColumn[];
}
export interface CrdSpec {
  group: string;
  scope?: string;
  names: { plural: string; singular?: string; kind: string; listKind?: string; shortNames?: string[]; categories?: string[] };
  versions?: CrdVersion[];
}
