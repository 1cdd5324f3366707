// The chart with the real helm binary: lint, template, and every rendered manifest checked by the
// kubernetes-models validators; the values schema rejects bad values.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { IDeployment } from 'kubernetes-models/apps/v1';
import type { IService } from 'kubernetes-models/v1';
import { CHART_DIR, helm } from './helm.js';

interface Manifest { apiVersion: string; kind: string; metadata: { name: string; namespace?: string }; [key: string]: unknown }
interface Rule { apiGroups: string[]; resources: string[]; verbs: string[] }

let home: string;
beforeAll(() => { home = mkdtempSync(path.join(os.tmpdir(), 'svc-chart-')); });
afterAll(() => rmSync(home, { recursive: true, force: true }));

function render(extra: string[] = []): Manifest[] {
  const result = helm(['template', 'rel', CHART_DIR, '--namespace', 'svc-system', '--include-crds', ...extra], home);
  expect(result.stderr).toBe('');
  expect(result.status).toBe(0);
  return parseAllDocuments(result.stdout).map((doc) => doc.toJS() as Manifest).filter(Boolean);
}

/** The kubernetes-models class for a manifest's apiVersion and kind. */
async function modelFor(m: Manifest): Promise<new (obj: unknown) => { validate(): void }> {
  // Core kinds live at kubernetes-models/v1, the others at kubernetes-models/<group>/<version>.
  const mod = (await import(`kubernetes-models/${m.apiVersion}`)) as Record<string, new (obj: unknown) => { validate(): void }>;
  const model = mod[m.kind];
  if (!model) throw new Error(`no kubernetes-models class for ${m.apiVersion} ${m.kind}`);
  return model;
}

function find(manifests: Manifest[], kind: string, name: string): Manifest {
  const found = manifests.find((m) => m.kind === kind && m.metadata.name === name);
  if (!found) throw new Error(`${kind} ${name} not rendered; got ${manifests.map((m) => `${m.kind}/${m.metadata.name}`).join(', ')}`);
  return found;
}

describe('charts/svc', () => {
  it('passes helm lint (strict)', () => {
    const result = helm(['lint', '--strict', CHART_DIR], home);
    expect(result.stdout).toContain('1 chart(s) linted, 0 chart(s) failed');
    expect(result.status).toBe(0);
  });

  it('renders manifests that all pass the kubernetes-models validators', async () => {
    const manifests = render();
    const kinds = new Set(manifests.map((m) => m.kind));
    for (const kind of ['Deployment', 'Service', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding']) {
      expect(kinds).toContain(kind);
    }
    for (const m of manifests) {
      const Model = await modelFor(m);
      expect(() => new Model(m).validate(), `${m.kind}/${m.metadata.name}`).not.toThrow();
    }
  });

  it('runs a leader-elected operator with 2 replicas and an API behind a Service, both probed', () => {
    const manifests = render();
    const operator = find(manifests, 'Deployment', 'rel-svc-operator') as unknown as Required<IDeployment>;
    expect(operator.spec.replicas).toBe(2);
    const api = find(manifests, 'Deployment', 'rel-svc-api') as unknown as Required<IDeployment>;
    for (const deployment of [operator, api]) {
      const template = deployment.spec!.template;
      const container = template.spec!.containers[0]!;
      expect(container.ports!.map((p) => p.name)).toEqual(['http']);
      expect(container.livenessProbe!.httpGet).toEqual({ path: '/healthz', port: 'http' });
      expect(container.readinessProbe!.httpGet).toEqual({ path: '/readyz', port: 'http' });
      expect(template.metadata!.annotations!['prometheus.io/path']).toBe('/metrics');
      expect(template.metadata!.labels).toMatchObject(deployment.spec!.selector.matchLabels!);
    }
    const service = find(manifests, 'Service', 'rel-svc-api') as unknown as Required<IService>;
    expect(service.spec!.selector).toEqual(api.spec!.selector.matchLabels);
    expect(service.spec!.ports![0]!.targetPort).toBe('http');
  });

  it('grants only the verbs the code uses, leases and token secrets only in the release namespace', () => {
    const manifests = render();
    const rules = (kind: string, name: string) => (find(manifests, kind, name) as unknown as { rules: Rule[] }).rules;
    const verbs = (list: Rule[], resource: string) => list.filter((r) => r.resources.includes(resource)).flatMap((r) => r.verbs).sort();
    const operator = rules('ClusterRole', 'rel-svc-operator');
    expect(verbs(operator, 'projects')).toEqual(['get', 'list', 'patch', 'watch']); // patch: the finalizer that waits for its Sessions' cleanup
    expect(verbs(operator, 'projects/status')).toEqual(['update']);
    expect(verbs(operator, 'triggers')).toEqual(['create', 'delete', 'get', 'list', 'patch', 'watch']);
    expect(verbs(operator, 'secrets')).toEqual(['create', 'delete', 'get', 'update']);
    expect(verbs(operator, 'pods')).toEqual(['create', 'delete', 'get', 'list', 'watch']); // list, watch: the Sandbox controller watches its Pods
    expect(verbs(operator, 'triggerfires')).toEqual(['create', 'delete', 'get', 'list', 'watch']); // delete: retention
    expect(verbs(operator, 'configmaps')).toEqual(['create', 'delete', 'get', 'list', 'patch', 'watch']); // the delivery ledger
    expect(verbs(operator, 'triggerfires/status')).toEqual(['update']);
    expect(verbs(operator, 'triggers/status')).toEqual(['update']);
    expect(verbs(operator, 'sessions')).toEqual(['create', 'delete', 'get', 'list', 'patch', 'watch']); // delete: a deleted Project's
    expect(verbs(operator, 'sandboxes')).toEqual(['create', 'delete', 'get', 'list', 'patch', 'watch']); // delete: retention of stopped ones
    expect(verbs(operator, 'pods/log')).toEqual(['get']); // a failed sandbox's log, kept with its Session
    expect(verbs(operator, 'leases')).toEqual([]);
    const leader = find(manifests, 'Role', 'rel-svc-operator-leader') as unknown as { metadata: { namespace: string }; rules: Rule[] };
    expect(leader.metadata.namespace).toBe('svc-system');
    expect(verbs(leader.rules, 'leases')).toEqual(['create', 'get', 'list', 'update', 'watch']); // list/watch: the Lease is watched
    expect(verbs(leader.rules, 'secrets')).toEqual(['create', 'delete', 'get', 'list']);
    const api = rules('ClusterRole', 'rel-svc-api');
    expect(verbs(api, 'projects')).toEqual(['create', 'delete', 'get', 'list', 'patch', 'watch']);
    expect(verbs(api, 'projects/status')).toEqual(['update']);
    expect(verbs(api, 'changerequests')).toEqual(['create', 'delete', 'get', 'list', 'update']);
    expect(verbs(api, 'changerequests/status')).toEqual(['update']);
    expect(verbs(api, 'namespaces')).toEqual(['get']);
    expect(verbs(api, 'sandboxes')).toEqual(['get', 'list', 'patch', 'watch']); // a listing reads them from its cache; daemon events
    expect(verbs(operator, 'events')).toEqual(['create', 'patch']); // patch: repeats counted on one Event
    // Secrets: never cluster-wide for the API; token Secrets in the release namespace, git
    // credentials, Session Secrets and project secrets in the project namespace (test/chart/rbac-journey.test.ts runs with these)
    expect(verbs(api, 'secrets')).toEqual([]);
    expect(verbs(rules('Role', 'rel-svc-api-tokens'), 'secrets')).toEqual(['create', 'delete', 'get', 'list', 'patch']);
    const projectSecrets = find(manifests, 'Role', 'rel-svc-api-project-secrets') as unknown as { metadata: { namespace: string }; rules: Rule[] };
    expect(projectSecrets.metadata.namespace).toBe('default');
    // list/watch: the model gateway's label-selected caches (Session Secrets, providers Secrets); its usage ConfigMaps
    expect(verbs(projectSecrets.rules, 'secrets')).toEqual(['create', 'get', 'list', 'update', 'watch']);
    expect(verbs(projectSecrets.rules, 'configmaps')).toEqual(['create', 'delete', 'get', 'list', 'update', 'watch']);
    for (const m of manifests.filter((x) => x.kind.endsWith('Role'))) {
      for (const rule of (m as unknown as { rules: Rule[] }).rules) expect(rule.verbs).not.toContain('*');
    }
  });

  const envOf = (manifests: Manifest[], deployment: string) => {
    const container = (find(manifests, 'Deployment', deployment) as unknown as Required<IDeployment>).spec!.template.spec!.containers[0]!;
    return Object.fromEntries((container.env ?? []).map((e) => [e.name, e.value]));
  };

  it('passes operator.fireHistory to the operator as SVC_TRIGGER_FIRE_HISTORY (retention, docs/triggers.md)', () => {
    expect(envOf(render(), 'rel-svc-operator').SVC_TRIGGER_FIRE_HISTORY).toBe('100');
    expect(envOf(render(['--set', 'operator.fireHistory=7']), 'rel-svc-operator').SVC_TRIGGER_FIRE_HISTORY).toBe('7');
  });

  it('passes operator.sessionHistory to the operator as SVC_SESSION_HISTORY (0 by default: every session kept)', () => {
    expect(envOf(render(), 'rel-svc-operator').SVC_SESSION_HISTORY).toBe('0');
    expect(envOf(render(['--set', 'operator.sessionHistory=20']), 'rel-svc-operator').SVC_SESSION_HISTORY).toBe('20');
  });

  it('passes operator.extraEnv and api.extraEnv on, each to its own component', () => {
    const manifests = render(['--set-json', 'api.extraEnv=[{"name":"SVC_GIT_MAX_PUSH_BYTES","value":"1000"}]',
      '--set-json', 'operator.extraEnv=[{"name":"SVC_TRIGGER_QUEUE_DEPTH","value":"200"}]']);
    expect(envOf(manifests, 'rel-svc-api')).toMatchObject({ SVC_GIT_MAX_PUSH_BYTES: '1000', SVC_MIRROR_DIR: '/var/lib/svc/mirrors' });
    expect(envOf(manifests, 'rel-svc-api').SVC_TRIGGER_QUEUE_DEPTH).toBeUndefined();
    expect(envOf(manifests, 'rel-svc-operator')).toMatchObject({ SVC_TRIGGER_QUEUE_DEPTH: '200', SVC_TRIGGER_FIRE_HISTORY: '100' });
    const bad = helm(['template', 'rel', CHART_DIR, '--set-json', 'api.extraEnv=[{"value":"1"}]'], home);
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toContain('extraEnv');
  });

  it('rejects values that break the schema, with a message naming the key', () => {
    for (const [set, key] of [['operator.replicas=0', 'operator.replicas'], ['operator.fireHistory=-1', 'operator.fireHistory'], ['operator.sessionHistory=-1', 'operator.sessionHistory'], ['api.service.type=Bogus', 'api.service.type'], ['unknownKey=1', 'unknownKey']]) {
      const result = helm(['template', 'rel', CHART_DIR, '--set', set!], home);
      expect(result.status).not.toBe(0);
      expect(result.stderr).toContain('values don\'t meet the specifications of the schema');
      expect(result.stderr).toContain(key!.split('.').pop());
    }
  });
});
