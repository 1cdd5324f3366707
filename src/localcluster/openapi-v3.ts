// /openapi/v3: what `kubectl explain` (1.27+) reads. The index lists one document per
// group-version that has custom resources; each document carries the CRDs' openAPIV3Schema as
// components.schemas, tagged with x-kubernetes-group-version-kind as the real server does.
// Built-in kinds have no schema here, so kubectl falls back to its compiled-in knowledge.
import { createHash } from 'node:crypto';
import type { Registry, ResourceType } from './resources.js';

/** `apis/<group>/<version>` of every group-version with custom resources. */
function customGroupVersions(registry: Registry): Map<string, ResourceType[]> {
  const out = new Map<string, ResourceType[]>();
  for (const gv of registry.groupVersions()) {
    const types = registry.typesOf(gv).filter((t) => !t.builtin && !t.review);
    if (types.length) out.set(`apis/${gv}`, types);
  }
  return out;
}

/** Definition names as the real server spells them: the group reversed (svc.dev -> dev.svc). */
function definitionName(t: ResourceType): string {
  return `${t.group.split('.').reverse().join('.')}.${t.version}.${t.kind}`;
}

function document(types: ResourceType[]): Record<string, unknown> {
  const schemas: Record<string, unknown> = {};
  const paths: Record<string, unknown> = {};
  for (const t of types) {
    // kubectl explain finds the kind through the path of the resource's list operation
    const gvk = { group: t.group, version: t.version, kind: t.kind };
    const collection = `/apis/${t.group}/${t.version}${t.namespaced ? '/namespaces/{namespace}' : ''}/${t.plural}`;
    const ref = { $ref: `#/components/schemas/${definitionName(t)}` };
    paths[collection] = { get: { operationId: `list${t.kind}`, 'x-kubernetes-action': 'list', 'x-kubernetes-group-version-kind': gvk, responses: { 200: { description: 'OK' } } } };
    paths[`${collection}/{name}`] = {
      get: { operationId: `read${t.kind}`, 'x-kubernetes-action': 'get', 'x-kubernetes-group-version-kind': gvk, responses: { 200: { description: 'OK', content: { 'application/json': { schema: ref } } } } },
    };
    const schema = (t.schema ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }) as Record<string, unknown>;
    const properties = { ...((schema.properties as Record<string, unknown> | undefined) ?? {}) };
    properties.apiVersion ??= { type: 'string', description: 'APIVersion defines the versioned schema of this representation of an object.' };
    properties.kind ??= { type: 'string', description: 'Kind is a string value representing the REST resource this object represents.' };
    properties.metadata = { type: 'object', description: "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata" };
    schemas[definitionName(t)] = {
      ...schema,
      properties,
      'x-kubernetes-group-version-kind': [{ group: t.group, version: t.version, kind: t.kind }],
    };
  }
  return { openapi: '3.0.0', info: { title: 'Kubernetes', version: 'v1.31.0' }, paths, components: { schemas } };
}

const hashOf = (body: unknown) => createHash('sha512').update(JSON.stringify(body)).digest('hex').slice(0, 128).toUpperCase();

/** GET /openapi/v3 */
export function openApiV3Index(registry: Registry): Record<string, unknown> {
  const paths: Record<string, { serverRelativeURL: string }> = {};
  for (const [path, types] of customGroupVersions(registry)) {
    paths[path] = { serverRelativeURL: `/openapi/v3/${path}?hash=${hashOf(document(types))}` };
  }
  return { paths };
}

/** GET /openapi/v3/apis/<group>/<version>, or undefined when it has no custom resources. */
export function openApiV3Document(registry: Registry, path: string): Record<string, unknown> | undefined {
  const types = customGroupVersions(registry).get(path);
  return types && document(types);
}
