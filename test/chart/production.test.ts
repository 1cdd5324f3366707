// Issue 12 §4: the chart a cluster admin can trust. Every workload passes the restricted Pod
// Security Standard; PDBs, Ingress, mirror PVC, ServiceMonitor, dashboard and the sandbox
// NetworkPolicy render and validate; sandbox values reach the operator; the schema covers every key.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { restrictedViolations } from '../helpers/pod-security.js';
import { CHART_DIR, helm, renderChart, type Manifest } from './helm.js';

let home: string;
beforeAll(() => { home = mkdtempSync(path.join(os.tmpdir(), 'svc-chart-prod-')); });
afterAll(() => rmSync(home, { recursive: true, force: true }));

const ALL_ON = [
  '--set', 'metrics.serviceMonitor.enabled=true', '--set', 'metrics.dashboard.enabled=true',
  '--set', 'api.ingress.enabled=true', '--set', 'api.ingress.className=nginx',
  '--set-json', 'api.ingress.tls=[{"secretName":"svc-tls","hosts":["svc.example.com"]}]',
  '--set', 'api.mirrors.persistence.enabled=true', '--set', 'sandbox.runtimeClassName=gvisor',
  '--set-json', 'networkPolicy.namespaces=["team-a","team-b"]',
];

type PodSpec = Record<string, unknown> & { containers: { name: string; env?: { name: string; value?: string }[] }[] };
const podSpecOf = (m: Manifest): PodSpec => (m.kind === 'Pod' ? m.spec : (m.spec as { template: { spec: unknown } }).template.spec) as PodSpec;
const envOf = (m: Manifest) => Object.fromEntries((podSpecOf(m).containers[0]!.env ?? []).map((e) => [e.name, e.value]));
const find = (ms: Manifest[], kind: string, name: string) => {
  const m = ms.find((x) => x.kind === kind && x.metadata.name === name);
  if (!m) throw new Error(`${kind}/${name} not rendered`);
  return m;
};

async function validate(m: Manifest): Promise<void> {
  if (m.apiVersion === 'monitoring.coreos.com/v1') {
    // no kubernetes-models class for prometheus-operator kinds: the fields it needs
    expect(m.spec).toMatchObject({ selector: { matchLabels: { 'app.kubernetes.io/instance': 'rel' } }, endpoints: [{ port: 'http', path: '/metrics' }] });
    return;
  }
  const mod = (await import(`kubernetes-models/${m.apiVersion}`)) as Record<string, new (o: unknown) => { validate(): void }>;
  expect(mod[m.kind], `${m.apiVersion} ${m.kind}`).toBeDefined();
  expect(() => new mod[m.kind]!(m).validate(), `${m.kind}/${m.metadata.name}`).not.toThrow();
}

describe('charts/svc in production', () => {
  it('renders every optional object, each valid', async () => {
    const manifests = await renderChart(home, ALL_ON);
    const names = manifests.map((m) => `${m.kind}/${m.metadata.namespace ?? ''}/${m.metadata.name}`);
    expect(names).toEqual(expect.arrayContaining([
      'PodDisruptionBudget/svc-system/rel-svc-operator', 'PodDisruptionBudget/svc-system/rel-svc-api',
      'Ingress/svc-system/rel-svc-api', 'PersistentVolumeClaim/svc-system/rel-svc-api-mirrors',
      'ServiceMonitor/svc-system/rel-svc', 'Service/svc-system/rel-svc-operator-metrics', 'ConfigMap/svc-system/rel-svc-dashboard',
      'NetworkPolicy/team-a/rel-svc-sandboxes', 'NetworkPolicy/team-b/rel-svc-sandboxes', 'Pod/svc-system/rel-svc-test-readyz',
    ]));
    for (const m of manifests) await validate(m);
    const dashboard = JSON.parse((find(manifests, 'ConfigMap', 'rel-svc-dashboard').data as Record<string, string>)['svc.json']!) as { panels: { targets: { expr: string }[] }[] };
    const exprs = dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr)).join('\n');
    for (const metric of ['svc_reconcile_total', 'svc_reconcile_duration_seconds', 'svc_workqueue_depth', 'svc_operator_leader', 'svc_sessions', 'svc_sandboxes', 'svc_trigger_fires', 'svc_scheduler_lateness_seconds', 'svc_http_requests_total', 'svc_webhook_deliveries_total', 'svc_git_pushes_total']) {
      expect(exprs).toContain(metric);
    }
    const api = find(manifests, 'Deployment', 'rel-svc-api');
    expect((podSpecOf(api).volumes as { name: string; persistentVolumeClaim?: { claimName: string } }[]).find((v) => v.name === 'mirrors')).toEqual({ name: 'mirrors', persistentVolumeClaim: { claimName: 'rel-svc-api-mirrors' } });
  });

  it('every workload passes the restricted Pod Security Standard', async () => {
    const manifests = await renderChart(home, ALL_ON);
    const workloads = manifests.filter((m) => m.kind === 'Deployment' || m.kind === 'Pod');
    expect(workloads.map((m) => m.metadata.name).sort()).toEqual(['rel-svc-api', 'rel-svc-operator', 'rel-svc-test-readyz']);
    for (const m of workloads) expect(restrictedViolations(podSpecOf(m)), m.metadata.name).toEqual([]);
  });

  it('sandbox pods: ingress only from the API and operator pods to 8000; egress DNS, the API and the internet but no private range', async () => {
    const policy = find(await renderChart(home), 'NetworkPolicy', 'rel-svc-sandboxes') as Manifest & { spec: Record<string, unknown> };
    expect(policy.metadata.namespace).toBe('default');
    const svcPods = (component: string) => ({ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'svc-system' } }, podSelector: { matchLabels: { 'app.kubernetes.io/name': 'svc', 'app.kubernetes.io/instance': 'rel', 'app.kubernetes.io/component': component } } });
    const [apiPods, operatorPods] = [svcPods('api'), svcPods('operator')];
    expect(policy.spec).toEqual({
      podSelector: { matchLabels: { 'app.kubernetes.io/name': 'svc', 'app.kubernetes.io/component': 'sandbox' } },
      policyTypes: ['Ingress', 'Egress'],
      ingress: [{ from: [apiPods, operatorPods], ports: [{ port: 8000, protocol: 'TCP' }] }],
      egress: [
        { to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } }, podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } }], ports: [{ port: 53, protocol: 'UDP' }, { port: 53, protocol: 'TCP' }] },
        { to: [apiPods], ports: [{ port: 8080, protocol: 'TCP' }] },
        { to: [{ ipBlock: { cidr: '0.0.0.0/0', except: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', '169.254.0.0/16'] } }] },
      ],
    });
    const closed = find(await renderChart(home, ['--set', 'networkPolicy.allowInternet=false']), 'NetworkPolicy', 'rel-svc-sandboxes') as Manifest & { spec: { egress: unknown[] } };
    expect(closed.spec.egress).toHaveLength(2);
    expect((await renderChart(home, ['--set', 'networkPolicy.enabled=false'])).some((m) => m.kind === 'NetworkPolicy')).toBe(false);
  });

  it('gives the operator the sandbox defaults and both components the session cap and idle timeout', async () => {
    const manifests = await renderChart(home, [
      '--set', 'sandbox.image.tag=1.2.3', '--set', 'sandbox.resources.cpu=2', '--set', 'sandbox.runtimeClassName=kata',
      '--set-json', 'sandbox.nodeSelector={"pool":"sandboxes"}', '--set-json', 'sandbox.tolerations=[{"key":"sandbox","operator":"Exists","effect":"NoSchedule"}]',
      '--set', 'sandbox.maxConcurrentSessions=4', '--set', 'sandbox.idleTimeoutSeconds=600',
    ]);
    const operator = envOf(find(manifests, 'Deployment', 'rel-svc-operator'));
    expect(operator).toMatchObject({
      SVC_SANDBOX_PROVIDER: 'kubernetes', SVC_SANDBOX_IMAGE: 'ghcr.io/svc-dev/svc-sandbox:1.2.3', SVC_SANDBOX_CPU: '2',
      SVC_SANDBOX_RUNTIME_CLASS: 'kata', SVC_SANDBOX_NODE_SELECTOR: '{"pool":"sandboxes"}',
      SVC_SANDBOX_TOLERATIONS: '[{"effect":"NoSchedule","key":"sandbox","operator":"Exists"}]',
      SVC_SANDBOX_API_URL: 'http://rel-svc-api.svc-system.svc:80/v1', SVC_MAX_CONCURRENT_SESSIONS: '4', SVC_IDLE_TIMEOUT: '600',
    });
    expect(envOf(find(manifests, 'Deployment', 'rel-svc-api'))).toMatchObject({ SVC_MAX_CONCURRENT_SESSIONS: '4', SVC_IDLE_TIMEOUT: '600' });
  });

  it('values.schema.json covers every key of values.yaml and refuses unknown ones', () => {
    const values = parseYaml(readFileSync(path.join(CHART_DIR, 'values.yaml'), 'utf8')) as Record<string, unknown>;
    const schema = JSON.parse(readFileSync(path.join(CHART_DIR, 'values.schema.json'), 'utf8')) as SchemaNode & { definitions: Record<string, SchemaNode> };
    const missing: string[] = [];
    const walk = (value: unknown, node: SchemaNode | undefined, at: string) => {
      if (node?.$ref) node = schema.definitions[node.$ref.replace('#/definitions/', '')];
      if (!node) return missing.push(at);
      if (!value || typeof value !== 'object' || Array.isArray(value) || !node.properties) return;
      for (const [key, child] of Object.entries(value)) walk(child, node.properties[key] ?? (node.additionalProperties && typeof node.additionalProperties === 'object' ? node.additionalProperties : undefined), at ? `${at}.${key}` : key);
    };
    walk(values, schema, '');
    expect(missing).toEqual([]);
    for (const [flag, key] of [['sandbox.bogus=1', 'bogus'], ['sandbox.resources.cpu=0', 'cpu'], ['networkPolicy.internetExcept[0]=nope', 'internetExcept'], ['api.ingress.host=Not_A_Host', 'host']]) {
      const result = helm(['template', 'rel', CHART_DIR, '--set', flag!], home);
      expect(result.status, flag).not.toBe(0);
      expect(result.stderr).toContain(key);
    }
  });
});

interface SchemaNode { $ref?: string; properties?: Record<string, SchemaNode>; additionalProperties?: boolean | SchemaNode }
