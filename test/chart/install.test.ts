// `helm install` of charts/svc into the local cluster with the real helm binary: CRDs, operator
// and API Deployments, ServiceAccounts, RBAC and the Service land; uninstall removes them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { adminKubeconfig, startLocalCluster, type LocalCluster } from '../../src/localcluster/index.js';
import { CHART_DIR, helmAsync as helm } from './helm.js';
import { runOk } from '../dev/util.js';

let tmp: string;
let cluster: LocalCluster;
let kubeconfig: string;
const kubectl = (...args: string[]) => runOk('kubectl', ['--kubeconfig', kubeconfig, ...args]);

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'svc-helm-install-'));
  cluster = await startLocalCluster({ dataDir: path.join(tmp, 'cluster'), port: 0 });
  kubeconfig = path.join(tmp, 'kubeconfig');
  writeFileSync(kubeconfig, adminKubeconfig(cluster), { mode: 0o600 });
});

afterAll(async () => {
  await cluster?.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe('helm install charts/svc', () => {
  it('installs CRDs, both Deployments, ServiceAccounts, RBAC and the API Service into the local cluster', async () => {
    const home = path.join(tmp, 'helm');
    const install = await helm(['install', 'svc', CHART_DIR, '--kubeconfig', kubeconfig, '--namespace', 'svc-system', '--create-namespace'], home);
    expect(install.stderr).toBe('');
    expect(install.status).toBe(0);
    expect(install.stdout).toContain('STATUS: deployed');
    // NOTES: the image must be built and pushed; how to mint the first token
    expect(install.stdout).toContain('ghcr.io/svc-dev/svc:0.1.0');
    expect(install.stdout).toContain('make image IMAGE=<registry>/svc');
    expect(install.stdout).toContain('ErrImagePull or ImagePullBackOff');
    expect(install.stdout).toContain('svc tokens create --name admin --write');
    // what the NOTES say of this cluster (issue 23) is what one sees here: 0 ready, no Pods, no Events
    expect(install.stdout.replace(/\s+/g, ' ')).toContain("`svc dev`'s local cluster has no Deployment controller (and no kubelet for these Pods): the Deployments stay READY 0/N with no Pods and no Events.");
    expect(await kubectl('-n', 'svc-system', 'get', 'deployment', 'svc-api', '-o', 'jsonpath={.status.readyReplicas}')).toBe('');
    expect((await kubectl('-n', 'svc-system', 'get', 'pods', '-o', 'name')).trim()).toBe('');
    expect((await kubectl('-n', 'svc-system', 'get', 'events', '-o', 'name')).trim()).toBe('');

    const crds = (await kubectl('get', 'crds', '-o', 'name')).trim().split('\n').filter((n) => n.endsWith('.svc.dev'));
    expect(crds).toHaveLength(6);
    const objects = (await kubectl('-n', 'svc-system', 'get', 'deployments,services,serviceaccounts,roles,rolebindings', '-l', 'app.kubernetes.io/instance=svc', '-o', 'name')).trim().split('\n').sort();
    expect(objects).toEqual([
      'deployment.apps/svc-api', 'deployment.apps/svc-operator',
      'role.rbac.authorization.k8s.io/svc-api-tokens', 'role.rbac.authorization.k8s.io/svc-operator-leader', 'role.rbac.authorization.k8s.io/svc-operator-tokens',
      'rolebinding.rbac.authorization.k8s.io/svc-api-tokens', 'rolebinding.rbac.authorization.k8s.io/svc-operator-leader', 'rolebinding.rbac.authorization.k8s.io/svc-operator-tokens',
      'service/svc-api', 'serviceaccount/svc-api', 'serviceaccount/svc-operator',
    ]);
    expect(await kubectl('get', 'clusterroles', 'svc-operator', 'svc-api', '-o', 'name')).toContain('clusterrole.rbac.authorization.k8s.io/svc-operator');
    expect(await kubectl('-n', 'svc-system', 'get', 'deployment', 'svc-operator', '-o', 'jsonpath={.spec.replicas}')).toBe('2');
    // pods that cannot pull the image: describe says where it comes from
    const described = await kubectl('-n', 'svc-system', 'describe', 'deployment', 'svc-api');
    expect(described).toMatch(/svc\.dev\/image:\s+ghcr\.io\/svc-dev\/svc:0\.1\.0 must be built from images\/svc\/Dockerfile/);

    const status = await helm(['status', 'svc', '--kubeconfig', kubeconfig, '--namespace', 'svc-system'], home);
    expect(status.stdout).toContain('STATUS: deployed');
    const uninstall = await helm(['uninstall', 'svc', '--kubeconfig', kubeconfig, '--namespace', 'svc-system'], home);
    expect(uninstall.status).toBe(0);
    expect((await kubectl('-n', 'svc-system', 'get', 'deployments', '-o', 'name')).trim()).toBe('');
  });
});
