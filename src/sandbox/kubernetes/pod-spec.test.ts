import { describe, expect, it } from 'vitest';
import { restrictedViolations } from '../../../test/helpers/pod-security.js';
import type { SandboxRequest } from '../provider.js';
import { entrypointCommand, sandboxPod, sandboxSecret, unbuildable } from './pod-spec.js';
import { DEFAULT_SETTINGS, KUBERNETES_SANDBOX_SETTINGS, settingsFromEnv } from './settings.js';

const TOKEN = 'svcsbx.11111111-2222-4333-8444-555555555555.abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ';
const request = (template: SandboxRequest['template'] = {}): SandboxRequest => ({
  namespace: 'team', name: '11111111-2222-4333-8444-555555555555', uid: 'sandbox-uid',
  sessionId: '11111111-2222-4333-8444-555555555555', projectId: 'project-uid', template,
  env: { SVC_SESSION_ID: '11111111-2222-4333-8444-555555555555', SVC_SERVICE_PORT: '8000', SVC_PROJECT_SECRET_NAMES: 'DB_PASSWORD' },
  secretEnv: { SVC_SANDBOX_TOKEN: TOKEN, SVC_TOKEN: TOKEN, SVC_CLI_TOKEN: 'svc_cli', SVC_EXECUTOR_TOKEN: 'svc_cli', DB_PASSWORD: 'hunter2' },
});
type Container = { command: string[]; image: string; env: { name: string; value?: string }[]; envFrom: unknown[]; resources: unknown; readinessProbe: { httpGet: { path: string; port: number } }; livenessProbe: { httpGet: { path: string } } };
const spec = (pod: ReturnType<typeof sandboxPod>) => pod.spec as Record<string, unknown> & { containers: Container[]; volumes: unknown[] };

describe('sandboxPod', () => {
  it('passes the restricted Pod Security Standard', () => {
    expect(restrictedViolations(spec(sandboxPod(request(), DEFAULT_SETTINGS)))).toEqual([]);
    expect(restrictedViolations(spec(sandboxPod(request(), { ...DEFAULT_SETTINGS, runtimeClassName: 'gvisor' })))).toEqual([]);
  });

  it('the standard check itself catches what it must', () => {
    const bad = { hostNetwork: true, volumes: [{ name: 'h', hostPath: { path: '/' } }], containers: [{ name: 'c', securityContext: { privileged: true, capabilities: { add: ['SYS_ADMIN'] } } }] };
    expect(restrictedViolations(bad)).toEqual(expect.arrayContaining([
      'spec.hostNetwork: must not be true', 'spec.volumes[0]: type hostPath is not allowed', 'container c: privileged',
      'container c: allowPrivilegeEscalation must be false', 'container c: capabilities must drop ALL', 'container c: capability SYS_ADMIN may not be added',
    ]));
  });

  it('holds no secret value: secrets come from the Secret by reference', () => {
    const pod = sandboxPod(request(), DEFAULT_SETTINGS);
    const text = JSON.stringify(pod);
    for (const secret of [TOKEN, 'svc_cli', 'hunter2']) expect(text).not.toContain(secret);
    const c = spec(pod).containers[0]!;
    expect(c.envFrom).toEqual([{ secretRef: { name: 'svc-sandbox-11111111-2222-4333-8444-555555555555' } }]);
    expect(c.env.map((e) => e.name)).toEqual(['SVC_SESSION_ID', 'SVC_SERVICE_PORT', 'SVC_PROJECT_SECRET_NAMES']);
    const secret = sandboxSecret(request());
    expect(Buffer.from((secret.data as Record<string, string>).SVC_SANDBOX_TOKEN!, 'base64').toString()).toBe(TOKEN);
    expect(secret.metadata.ownerReferences).toEqual([{ apiVersion: 'svc.dev/v1alpha1', kind: 'Sandbox', name: request().name, uid: 'sandbox-uid', controller: true, blockOwnerDeletion: true }]);
  });

  it('is hardened and owned by the Sandbox', () => {
    const pod = sandboxPod(request(), { ...DEFAULT_SETTINGS, runtimeClassName: 'gvisor', nodeSelector: { pool: 'sandboxes' }, tolerations: [{ key: 'sandbox', operator: 'Exists' }] });
    expect(pod.spec).toMatchObject({
      automountServiceAccountToken: false, hostNetwork: false, hostPID: false, hostIPC: false, runtimeClassName: 'gvisor',
      nodeSelector: { pool: 'sandboxes' }, tolerations: [{ key: 'sandbox', operator: 'Exists' }],
      volumes: [{ name: 'workspace', emptyDir: { sizeLimit: '10Gi' } }, { name: 'engine-home', emptyDir: { sizeLimit: '2Gi' } }],
    });
    expect(pod.metadata.ownerReferences![0]).toMatchObject({ kind: 'Sandbox', uid: 'sandbox-uid', controller: true });
    expect(pod.metadata.labels).toMatchObject({ 'svc.dev/sandbox': request().name, 'app.kubernetes.io/component': 'sandbox' });
  });

  it('takes image, resources and command from the template, defaults from the settings', () => {
    const c = spec(sandboxPod(request({ image: 'example/img:2', cpu: 2, memory: 512, disk: 4096, entrypoint: '/opt/start' }), DEFAULT_SETTINGS)).containers[0]!;
    expect(c.image).toBe('example/img:2');
    expect(c.command).toEqual(['/opt/start']);
    const r = { cpu: '2', memory: '512Mi', 'ephemeral-storage': '4Gi' };
    expect(c.resources).toEqual({ requests: r, limits: r });
    const d = spec(sandboxPod(request(), DEFAULT_SETTINGS)).containers[0]!;
    expect(d.image).toBe(DEFAULT_SETTINGS.image);
    expect(d.command).toEqual(['/usr/local/bin/svc-entrypoint']);
    expect(d.readinessProbe.httpGet).toMatchObject({ path: '/svc/health?ready=1', port: 8000 });
    expect(d.livenessProbe.httpGet.path).toBe('/svc/health');
  });

  it('runs a multi-word entrypoint through the shell', () => {
    expect(entrypointCommand('start --fast')).toEqual(['/bin/sh', '-c', 'start --fast']);
    expect(entrypointCommand(undefined)).toEqual(['/usr/local/bin/svc-entrypoint']);
  });
});

describe('unbuildable', () => {
  it('refuses a dockerfile template without a build backend, saying so', () => {
    expect(unbuildable(request({ dockerfile: '.svc/Dockerfile' }), DEFAULT_SETTINGS)).toMatch(/no image build backend is configured/);
    expect(unbuildable(request({ dockerfile: '.svc/Dockerfile' }), { ...DEFAULT_SETTINGS, buildBackend: 'kaniko' })).toBeUndefined();
    expect(unbuildable(request({ image: 'x' }), DEFAULT_SETTINGS)).toBeUndefined();
  });
});

describe('settingsFromEnv', () => {
  it('reads the chart values and refuses bad ones', () => {
    const s = settingsFromEnv({ SVC_SANDBOX_IMAGE: 'i:1', SVC_SANDBOX_CPU: '2', SVC_SANDBOX_NODE_SELECTOR: '{"a":"b"}', SVC_SANDBOX_TOLERATIONS: '[{"key":"k"}]', SVC_SANDBOX_PROVISIONING_DEADLINE_SECONDS: '60' });
    expect(s).toMatchObject({ image: 'i:1', cpu: 2, nodeSelector: { a: 'b' }, tolerations: [{ key: 'k' }], provisioningDeadlineMs: 60_000, memory: 2048 });
    expect(() => settingsFromEnv({ SVC_SANDBOX_CPU: '0' })).toThrow(/SVC_SANDBOX_CPU/);
    expect(() => settingsFromEnv({ SVC_SANDBOX_NODE_SELECTOR: '[1]' })).toThrow(/SVC_SANDBOX_NODE_SELECTOR/);
  });

  it('reads exactly the variables it lists (svc dev passes those on)', () => {
    const read = new Set<string>();
    settingsFromEnv(new Proxy({}, { get: (_, name) => { read.add(String(name)); return undefined; } }));
    expect([...read].sort()).toEqual([...KUBERNETES_SANDBOX_SETTINGS].sort());
  });
});
