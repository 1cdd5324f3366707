// Opt-in RBAC in the local cluster, driven by the real kubectl: ServiceAccount tokens from the
// TokenRequest API (`kubectl create token`), Roles/ClusterRoles and their bindings (verbs,
// resources, subresources, resourceNames, namespaces), the real 403 Status, `kubectl auth can-i`
// from the same rules, and an all-powerful admin kubeconfig.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Agent, fetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubeconfigYaml } from '../../src/localcluster/index.js';
import { FIXTURES, run, startTestCluster, type TestCluster } from './helpers.js';

let tc: TestCluster;
let botKubeconfig: string;
let botToken: string;
const BOT = 'system:serviceaccount:team:bot';

/** kubectl as the ServiceAccount team/bot. */
const asBot = (args: string[], input?: string) => run('kubectl', ['--kubeconfig', botKubeconfig, '--cache-dir', path.join(tc.dir, 'bot-cache'), ...args], { input, env: { ...process.env, HOME: tc.dir } });
// with authorization the cluster serves https with a self-signed certificate
const insecure = new Agent({ connect: { rejectUnauthorized: false } });
const raw = (method: string, urlPath: string, token?: string, body?: unknown) => fetch(tc.cluster.url + urlPath, {
  method,
  dispatcher: insecure,
  headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), 'content-type': 'application/json' },
  body: body === undefined ? undefined : JSON.stringify(body),
}).then(async (res) => ({ status: res.status, body: (await res.json()) as Record<string, unknown> }));

beforeAll(async () => {
  tc = await startTestCluster({ authorization: true });
  await tc.kubectlOk(['apply', '-f', path.join(FIXTURES, 'widget-crd.yaml')]);
  await tc.kubectlOk(['create', 'namespace', 'team']);
  await tc.kubectlOk(['-n', 'team', 'create', 'serviceaccount', 'bot']);
  botToken = (await tc.kubectlOk(['-n', 'team', 'create', 'token', 'bot'])).trim();
  botKubeconfig = path.join(tc.dir, 'bot.kubeconfig');
  writeFileSync(botKubeconfig, kubeconfigYaml(tc.cluster.url, { token: botToken, namespace: 'team', user: 'bot' }), { mode: 0o600 });
  for (const name of ['one', 'two']) await tc.kubectlOk(['-n', 'team', 'create', 'configmap', name, '--from-literal=k=v']);
  await tc.kubectlOk(['-n', 'default', 'create', 'configmap', 'elsewhere']);
  await tc.kubectlOk(['apply', '-f', '-'], JSON.stringify({
    apiVersion: 'v1', kind: 'List', items: [
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'configs', namespace: 'team' }, rules: [
        { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] },
        { apiGroups: [''], resources: ['configmaps'], resourceNames: ['one'], verbs: ['patch', 'update'] },
      ] },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'configs', namespace: 'team' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'configs' }, subjects: [{ kind: 'ServiceAccount', name: 'bot', namespace: 'team' }] },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'widget-status' }, rules: [
        { apiGroups: ['test.svc.dev'], resources: ['widgets'], verbs: ['get', 'list', 'create'] },
        { apiGroups: ['test.svc.dev'], resources: ['widgets/status'], verbs: ['update'] },
      ] },
      // a ClusterRole bound in one namespace grants it there only
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'widget-status', namespace: 'team' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'widget-status' }, subjects: [{ kind: 'Group', name: 'system:serviceaccounts:team' }] },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'ns-reader' }, rules: [{ apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list'] }] },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'ns-reader' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'ns-reader' }, subjects: [{ kind: 'ServiceAccount', name: 'bot', namespace: 'team' }] },
    ],
  }));
});
afterAll(async () => tc?.close());

describe('local cluster RBAC (authorization: true)', () => {
  it('the admin kubeconfig may do anything; no token or an unknown one is 401', async () => {
    expect((await tc.kubectlOk(['auth', 'can-i', '*', '*', '--all-namespaces'])).trim()).toBe('yes');
    expect((await raw('GET', '/api/v1/namespaces')).status).toBe(401);
    const unknown = await raw('GET', '/api/v1/namespaces', 'not-a-token');
    expect(unknown).toEqual({ status: 401, body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 } });
    expect((await fetch(`${tc.cluster.url}/healthz`, { dispatcher: insecure })).status).toBe(200);
    expect(tc.cluster.url).toMatch(/^https:/);
  });

  it('kubectl create token issues a ServiceAccount token (TokenRequest) that authenticates as the ServiceAccount', async () => {
    expect(botToken.split('.')).toHaveLength(3);
    const review = await raw('POST', '/api/v1/namespaces/team/serviceaccounts/bot/token', botToken, { spec: {} });
    expect(review.status).toBe(403); // the bot may not mint tokens for itself
    expect((await raw('POST', '/api/v1/namespaces/team/serviceaccounts/bot/token', undefined, { spec: {} })).status).toBe(401);
    const issued = await raw('POST', '/api/v1/namespaces/team/serviceaccounts/bot/token', tc.cluster.token, { spec: { expirationSeconds: 3600 } });
    expect(issued.status).toBe(201);
    expect(issued.body).toMatchObject({ kind: 'TokenRequest', apiVersion: 'authentication.k8s.io/v1', status: { token: expect.any(String), expirationTimestamp: expect.any(String) } });
    expect((await raw('POST', '/api/v1/namespaces/team/serviceaccounts/nobody/token', tc.cluster.token, {})).status).toBe(404);
    expect((await asBot(['get', 'configmaps'])).code).toBe(0);
  });

  it('a Role grants its verbs in its namespace only; elsewhere the real Forbidden message', async () => {
    expect((await asBot(['get', 'configmaps', '-o', 'name'])).stdout.trim().split('\n')).toEqual(['configmap/one', 'configmap/two']);
    const elsewhere = await asBot(['-n', 'default', 'get', 'configmaps']);
    expect(elsewhere.code).not.toBe(0);
    expect(elsewhere.stderr).toContain(`Error from server (Forbidden): configmaps is forbidden: User "${BOT}" cannot list resource "configmaps" in API group "" in the namespace "default"`);
    const create = await asBot(['create', 'configmap', 'three']);
    expect(create.stderr).toContain(`configmaps is forbidden: User "${BOT}" cannot create resource "configmaps" in API group "" in the namespace "team"`);
    expect((await asBot(['get', 'secrets'])).stderr).toContain('cannot list resource "secrets"');
  });

  it('resourceNames limit a verb to the named objects', async () => {
    expect((await asBot(['label', 'configmap', 'one', 'x=1'])).code).toBe(0);
    const two = await asBot(['label', 'configmap', 'two', 'x=1']);
    expect(two.stderr).toContain(`configmaps "two" is forbidden: User "${BOT}" cannot patch resource "configmaps" in API group "" in the namespace "team"`);
  });

  it('subresources are their own resource: widgets/status may be updated, the widget itself may not', async () => {
    const widget = { apiVersion: 'test.svc.dev/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'team' }, spec: { size: 1 } };
    const created = await raw('POST', '/apis/test.svc.dev/v1/namespaces/team/widgets', botToken, widget);
    expect(created.status).toBe(201);
    const current = created.body as { metadata: { resourceVersion: string } };
    const status = await raw('PUT', '/apis/test.svc.dev/v1/namespaces/team/widgets/w/status', botToken, { ...widget, metadata: { ...widget.metadata, resourceVersion: current.metadata.resourceVersion }, status: { ready: true } });
    expect(status.status).toBe(200);
    const spec = await raw('PUT', '/apis/test.svc.dev/v1/namespaces/team/widgets/w', botToken, { ...status.body, spec: { size: 2 } });
    expect(spec).toEqual({ status: 403, body: {
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'Forbidden', code: 403,
      message: `widgets.test.svc.dev "w" is forbidden: User "${BOT}" cannot update resource "widgets" in API group "test.svc.dev" in the namespace "team"`,
      details: { name: 'w', group: 'test.svc.dev', kind: 'widgets' },
    } });
    expect((await raw('GET', '/apis/test.svc.dev/v1/namespaces/default/widgets', botToken)).status).toBe(403);
  });

  it('a ClusterRoleBinding grants cluster-wide', async () => {
    expect((await asBot(['get', 'namespaces', 'team', '-o', 'name'])).stdout.trim()).toBe('namespace/team');
    expect((await asBot(['delete', 'namespace', 'team'])).stderr).toContain(`namespaces "team" is forbidden: User "${BOT}" cannot delete resource "namespaces" in API group "" at the cluster scope`);
  });

  it('kubectl auth can-i answers from the same rules (SelfSubjectAccessReview, SelfSubjectRulesReview)', async () => {
    const can = async (...args: string[]) => (await asBot(['auth', 'can-i', ...args])).stdout.trim();
    expect(await can('list', 'configmaps')).toBe('yes');
    expect(await can('list', 'configmaps', '-n', 'default')).toBe('no');
    expect(await can('update', 'configmaps/one')).toBe('yes');
    expect(await can('update', 'configmaps/two')).toBe('no');
    expect(await can('update', 'widgets.test.svc.dev', '--subresource', 'status')).toBe('yes');
    expect(await can('update', 'widgets.test.svc.dev')).toBe('no');
    expect(await can('list', 'namespaces')).toBe('yes');
    expect(await can('create', 'serviceaccounts/token')).toBe('no');
    const list = (await asBot(['auth', 'can-i', '--list'])).stdout;
    expect(list).toMatch(/configmaps\s+\[\]\s+\[\]\s+\[get list watch\]/);
    expect(list).toMatch(/configmaps\s+\[\]\s+\[one\]\s+\[patch update\]/);
  });

  it('a deleted ServiceAccount\'s token stops working', async () => {
    await tc.kubectlOk(['-n', 'team', 'create', 'serviceaccount', 'temp']);
    const token = (await tc.kubectlOk(['-n', 'team', 'create', 'token', 'temp'])).trim();
    const widgets = '/apis/test.svc.dev/v1/namespaces/team/widgets'; // granted to the group system:serviceaccounts:team
    expect((await raw('GET', widgets, token)).status).toBe(200);
    await tc.kubectlOk(['-n', 'team', 'delete', 'serviceaccount', 'temp']);
    expect((await raw('GET', widgets, token)).status).toBe(401);
  });
});
