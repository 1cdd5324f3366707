// The real kubectl against the local cluster: CRDs, apply, get (yaml, printer columns, short
// names, categories, selectors), describe, watch, validation, status, finalizers, GC, namespaces.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, WIDGETS, eventually, run, startTestCluster, widget } from './helpers.js';
import { kubectlsFrom } from '../helpers/kubectl-binaries.js';
import type { TestCluster } from './helpers.js';

let tc: TestCluster;
const kubectlMinor = async () => Number(JSON.parse(await tc.kubectlOk(['version', '--client', '-o', 'json'])).clientVersion.minor.replace(/\D+$/, ''));
beforeAll(async () => {
  tc = await startTestCluster();
  const out = await tc.kubectlOk(['apply', '-f', path.join(FIXTURES, 'widget-crd.yaml')]);
  expect(out).toContain('customresourcedefinition.apiextensions.k8s.io/widgets.test.svc.dev created');
});
afterAll(async () => tc?.close());

describe('kubectl with a CRD', () => {
  it('applies a custom resource, and applying it again is unchanged', async () => {
    expect(await tc.kubectlOk(['apply', '-f', path.join(FIXTURES, 'widget.yaml')])).toContain('widget.test.svc.dev/alpha created');
    expect(await tc.kubectlOk(['apply', '-f', path.join(FIXTURES, 'widget.yaml')])).toContain('widget.test.svc.dev/alpha unchanged');
    const crd = await tc.kubectlOk(['get', 'crd', 'widgets.test.svc.dev', '-o', 'jsonpath={.status.conditions[?(@.type=="Established")].status}']);
    expect(crd).toBe('True');
  });

  it('get -o yaml shows schema defaults and the last-applied annotation; unknown fields are refused (strict) or pruned', async () => {
    const doc = JSON.stringify(widget('pruned', { size: 2, bogus: 'x', extra: { free: 'kept' } }));
    if (await kubectlMinor() >= 25) {
      // kubectl 1.25+ asks the server for strict field validation
      const strict = await tc.kubectl(['apply', '-f', '-'], doc);
      expect(strict.stderr).toContain('strict decoding error: unknown field "spec.bogus"');
      await tc.kubectlOk(['apply', '--validate=false', '-f', '-'], doc);
    } else {
      // older kubectl (Debian's 1.20, what .ci/run installs when kubectl is missing) sends no
      // fieldValidation: the server's default, Warn, drops the field and says so
      const warned = await tc.kubectl(['apply', '-f', '-'], doc);
      expect(warned.code).toBe(0);
      expect(warned.stderr).toContain('Warning: unknown field "spec.bogus"');
    }
    const yaml = await tc.kubectlOk(['get', 'widget', 'pruned', '-o', 'yaml']);
    expect(yaml).toContain('color: red');
    expect(yaml).toContain('free: kept');
    expect(yaml).not.toMatch(/^ {2}bogus:/m); // only in the last-applied annotation, not in spec
    expect(yaml).toContain('kubectl.kubernetes.io/last-applied-configuration');
    expect(yaml).toMatch(/generation: 1/);
  });

  it('get prints the printer columns; short names and categories resolve', async () => {
    const table = await tc.kubectlOk(['get', 'widgets', 'alpha']);
    expect(table.split('\n')[0]).toMatch(/^NAME\s+SIZE\s+COLOR\s+READY\s+AGE$/);
    expect(table.split('\n')[1]).toMatch(/^alpha\s+3\s+red\s+\d+s$/);
    expect(await tc.kubectlOk(['get', 'wd', 'alpha', '-o', 'name'])).toBe('widget.test.svc.dev/alpha\n');
    expect(await tc.kubectlOk(['get', 'testcat', '-o', 'name'])).toContain('widget.test.svc.dev/alpha');
  });

  it('describe shows the object and its core/v1 Events; get events prints the event table', async () => {
    const uid = await tc.kubectlOk(['get', 'widget', 'alpha', '-o', 'jsonpath={.metadata.uid}']);
    const event = {
      apiVersion: 'v1', kind: 'Event', metadata: { name: 'alpha.1' }, type: 'Normal', reason: 'Polished', message: 'shiny now', count: 1,
      involvedObject: { apiVersion: 'test.svc.dev/v1', kind: 'Widget', name: 'alpha', namespace: 'default', uid },
      firstTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), lastTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), source: { component: 'test' },
    };
    await tc.kubectlOk(['create', '-f', '-'], JSON.stringify(event));
    const out = await tc.kubectlOk(['describe', 'widget', 'alpha']);
    expect(out).toMatch(/Name:\s+alpha/);
    expect(out).toMatch(/Size:\s+3/);
    expect(out).toMatch(/Normal\s+Polished\s+.*shiny now/);
    const events = (await tc.kubectlOk(['get', 'events'])).split('\n');
    expect(events[0]).toMatch(/^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE$/);
    expect(events[1]).toMatch(/Normal\s+Polished\s+widget\/alpha\s+shiny now/);
  });

  it('filters by label selectors', async () => {
    await tc.kubectlOk(['apply', '-f', '-'], JSON.stringify(widget('back', { size: 4 }, { tier: 'back' })));
    const names = async (sel: string) => (await tc.kubectlOk(['get', 'widgets', '-l', sel, '-o', 'name'])).trim().split('\n').filter(Boolean).sort();
    expect(await names('tier=front')).toEqual(['widget.test.svc.dev/alpha']);
    expect(await names('tier!=front')).toEqual(['widget.test.svc.dev/back', 'widget.test.svc.dev/pruned']);
    expect(await names('tier in (front,back)')).toEqual(['widget.test.svc.dev/alpha', 'widget.test.svc.dev/back']);
    expect(await names('tier notin (front)')).toEqual(['widget.test.svc.dev/back', 'widget.test.svc.dev/pruned']);
    expect(await names('tier')).toEqual(['widget.test.svc.dev/alpha', 'widget.test.svc.dev/back']);
    expect(await names('!tier')).toEqual(['widget.test.svc.dev/pruned']);
  });

  it('rejects a schema violation with 422 naming every bad field, and stores nothing', async () => {
    const bad = widget('bad', { size: 0, color: 'purple', name: 'X1' });
    const r = await tc.kubectl(['apply', '-f', '-'], JSON.stringify(bad));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('The Widget "bad" is invalid');
    expect(r.stderr).toContain('spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1');
    expect(r.stderr).toContain('spec.color: Unsupported value: "purple"');
    expect(r.stderr).toContain("spec.name in body should match '^[a-z]+$'");
    const missing = await tc.kubectl(['apply', '-f', '-'], JSON.stringify(widget('bad', { color: 'blue' })));
    expect(missing.stderr).toContain('spec.size: Required value');
    expect((await tc.kubectl(['get', 'widget', 'bad'])).stderr).toContain('widgets.test.svc.dev "bad" not found');
  });

  it('status subresource: the Ready column follows status written through /status only', async () => {
    const current = await tc.api('GET', `${WIDGETS}/alpha`);
    const status = { conditions: [{ type: 'Ready', status: 'True' }] };
    // On the main resource a status change is ignored...
    await tc.api('PATCH', `${WIDGETS}/alpha`, { status }, 'application/merge-patch+json');
    expect((await tc.api('GET', `${WIDGETS}/alpha`)).body.status).toBeUndefined();
    // ...and through /status a spec change is ignored.
    const r = await tc.api('PATCH', `${WIDGETS}/alpha/status`, { status, spec: { size: 99 } }, 'application/merge-patch+json');
    expect(r.status).toBe(200);
    expect((r.body.spec as { size: number }).size).toBe(3);
    expect(r.body.metadata!.generation).toBe(current.body.metadata!.generation);
    expect((await tc.kubectlOk(['get', 'widget', 'alpha'])).split('\n')[1]).toMatch(/^alpha\s+3\s+red\s+True\s+/);
  });

  it('kubectl get -w streams a change', async () => {
    const child = spawn('kubectl', ['--kubeconfig', tc.kubeconfig, '--cache-dir', path.join(tc.dir, 'kcache'), 'get', 'widgets', '-w', '--output-watch-events']);
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    try {
      await eventually(async () => out.includes('alpha'), 'the initial list');
      await tc.kubectlOk(['patch', 'widget', 'back', '--type', 'merge', '-p', '{"spec":{"size":42}}']);
      await eventually(async () => /MODIFIED\s+back\s+42/.test(out), 'the MODIFIED event');
      await tc.kubectlOk(['delete', 'widget', 'back']);
      await eventually(async () => /DELETED\s+back/.test(out), 'the DELETED event');
    } finally {
      child.kill();
    }
  });

  it('finalizers hold a deleted object until the last one is removed', async () => {
    await tc.kubectlOk(['apply', '-f', '-'], JSON.stringify({ ...widget('held', { size: 5 }), metadata: { name: 'held', finalizers: ['test.svc.dev/hold'] } }));
    await tc.kubectlOk(['delete', 'widget', 'held', '--wait=false']);
    const ts = await tc.kubectlOk(['get', 'widget', 'held', '-o', 'jsonpath={.metadata.deletionTimestamp}']);
    expect(ts).toMatch(/^\d{4}-\d\d-\d\dT/);
    const added = await tc.kubectl(['patch', 'widget', 'held', '--type', 'json', '-p', '[{"op":"add","path":"/metadata/finalizers/-","value":"another"}]']);
    expect(added.stderr).toContain('no new finalizers can be added');
    await tc.kubectlOk(['patch', 'widget', 'held', '--type', 'merge', '-p', '{"metadata":{"finalizers":null}}']);
    expect((await tc.kubectl(['get', 'widget', 'held'])).stderr).toContain('not found');
  });

  it('garbage-collects dependents when their owner is deleted', async () => {
    const owner = await tc.api('GET', `${WIDGETS}/pruned`);
    const cm = {
      apiVersion: 'v1', kind: 'ConfigMap',
      metadata: { name: 'owned', ownerReferences: [{ apiVersion: 'test.svc.dev/v1', kind: 'Widget', name: 'pruned', uid: owner.body.metadata!.uid }] },
      data: { a: 'b' },
    };
    await tc.kubectlOk(['apply', '-f', '-'], JSON.stringify(cm));
    await tc.kubectlOk(['delete', 'widget', 'pruned']);
    await eventually(async () => (await tc.kubectl(['get', 'configmap', 'owned'])).stderr.includes('not found'), 'the dependent to be collected');
  });
});

describe('kubectl with built-in kinds', () => {
  it('apply merges a Deployment change (strategic merge) and bumps generation', async () => {
    const deploy = (image: string, env: { name: string; value: string }[]) => JSON.stringify({
      apiVersion: 'apps/v1', kind: 'Deployment',
      metadata: { name: 'web' },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image, env }] } },
      },
    });
    expect(await tc.kubectlOk(['apply', '-f', '-'], deploy('nginx:1', [{ name: 'A', value: '1' }]))).toContain('deployment.apps/web created');
    expect(await tc.kubectlOk(['apply', '-f', '-'], deploy('nginx:2', [{ name: 'A', value: '1' }, { name: 'B', value: '2' }]))).toContain('deployment.apps/web configured');
    const got = JSON.parse(await tc.kubectlOk(['get', 'deploy', 'web', '-o', 'json']));
    expect(got.spec.template.spec.containers).toEqual([{ name: 'web', image: 'nginx:2', env: [{ name: 'A', value: '1' }, { name: 'B', value: '2' }] }]);
    expect(got.metadata.generation).toBe(2);
    const wide = (await tc.kubectlOk(['get', 'deploy', 'web', '-o', 'wide'])).split('\n');
    expect(wide[0]).toMatch(/^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\s+CONTAINERS\s+IMAGES\s+SELECTOR$/);
    expect(wide[1]).toMatch(/^web\s+0\/1\s+0\s+0\s+\S+\s+web\s+nginx:2\s+app=web$/);
    expect(await tc.kubectlOk(['apply', '-f', '-'], deploy('nginx:2', [{ name: 'A', value: '1' }, { name: 'B', value: '2' }]))).toContain('unchanged');
  });

  it('explain project.spec describes the fields from the CRD schema (/openapi/v3, kubectl 1.27+)', async () => {
    await tc.kubectlOk(['apply', '-f', path.resolve(FIXTURES, '../../../crds/projects.yaml')]);
    if (await kubectlMinor() < 27) return; // older kubectl reads only /openapi/v2 for explain
    const spec = await tc.kubectlOk(['explain', 'project.spec']);
    expect(spec).toMatch(/KIND:\s+Project/);
    expect(spec).toMatch(/repoUrl\s+<string> -required-/);
    expect(spec).toContain('Branch whose manifest drives the triggers.');
    const nested = await tc.kubectlOk(['explain', 'projects.status.manifest.summary']);
    expect(nested).toMatch(/FIELD: summary <string>/);
    expect((await tc.kubectl(['explain', 'project.spec.nope'])).stderr).toContain('field "nope" does not exist');
  });

  it('auth can-i answers yes: there is no authorization', async () => {
    expect((await tc.kubectlOk(['auth', 'can-i', 'delete', 'secrets'])).trim()).toBe('yes');
  });

  it('deleting a namespace deletes what is in it', async () => {
    await tc.kubectlOk(['create', 'namespace', 'scratch']);
    expect(await tc.kubectlOk(['-n', 'scratch', 'get', 'serviceaccount', 'default', '-o', 'name'])).toBe('serviceaccount/default\n');
    await tc.kubectlOk(['-n', 'scratch', 'create', 'configmap', 'c1', '--from-literal=k=v']);
    await tc.kubectlOk(['-n', 'scratch', 'apply', '-f', '-'], JSON.stringify(widget('w1')));
    expect(await tc.kubectlOk(['delete', 'namespace', 'scratch'])).toContain('namespace "scratch" deleted');
    expect((await tc.kubectl(['get', 'namespace', 'scratch'])).stderr).toContain('not found');
    expect((await tc.api('GET', '/api/v1/namespaces/scratch/configmaps/c1')).status).toBe(404);
    const create = await tc.kubectl(['-n', 'scratch', 'create', 'configmap', 'c2']);
    expect(create.stderr).toContain('namespaces "scratch" not found');
  });
});

// kubectl 1.32 and later write built-in kinds in protobuf (their typed clients); the local cluster
// read only JSON and YAML, so `kubectl create secret` of the README was 415 for a current kubectl.
// Every such kubectl this machine has (PATH's, and gcloud's versioned ones) runs the commands.
const protobufKubectls = kubectlsFrom(32);
describe.skipIf(protobufKubectls.length === 0)('kubectl 1.32 and later (protobuf bodies)', () => {
  it.each(protobufKubectls.map((k) => [k.minor, k.binary] as const))('kubectl 1.%i creates built-in kinds and asks can-i', async (minor, binary) => {
    const k = (args: string[]) => run(binary, ['--kubeconfig', tc.kubeconfig, '--cache-dir', path.join(path.dirname(tc.kubeconfig), `kcache-${minor}`), ...args]);
    const ok = async (args: string[]) => {
      const r = await k(args);
      expect(r, args.join(' ')).toMatchObject({ code: 0 });
      return r.stdout;
    };
    const ns = `pb-${minor}`;
    expect(await ok(['create', 'namespace', ns])).toBe(`namespace/${ns} created\n`);
    const n = ['-n', ns];
    await ok([...n, 'create', 'secret', 'generic', 'git', '--from-literal=username=bot', '--from-literal=password=s3cret']);
    await ok([...n, 'create', 'configmap', 'settings', '--from-literal=mode=fast']);
    await ok([...n, 'create', 'serviceaccount', 'robot']);
    await ok([...n, 'create', 'rolebinding', 'robot-view', '--clusterrole=view', '--serviceaccount', `${ns}:robot`]);
    expect((await ok([...n, 'create', 'token', 'robot', '--duration=10m'])).trim()).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect((await ok([...n, 'auth', 'can-i', 'delete', 'secrets'])).trim()).toBe('yes');
    const get = async (what: string) => JSON.parse(await ok([...n, 'get', what, '-o', 'json'])) as Record<string, unknown> & { metadata: Record<string, unknown> };
    const secret = await get('secret/git');
    expect(secret).toMatchObject({ type: 'Opaque', data: { username: Buffer.from('bot').toString('base64'), password: Buffer.from('s3cret').toString('base64') } });
    expect(secret.metadata).not.toHaveProperty('generateName'); // an empty protobuf string is no field, as in JSON
    expect(await get('configmap/settings')).toMatchObject({ data: { mode: 'fast' } });
    expect(await get('rolebinding/robot-view')).toMatchObject({ roleRef: { kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'ServiceAccount', name: 'robot', namespace: ns }] });
    // a kind without a protobuf table: refused saying what to send instead, nothing made
    const deployment = await k([...n, 'create', 'deployment', 'web', '--image=busybox']);
    expect(deployment.code).not.toBe(0);
    expect(deployment.stderr).toContain('a Deployment of apps/v1 was sent in protobuf: the svc local cluster reads protobuf bodies of');
    expect(deployment.stderr).toContain('send it as JSON or YAML (kubectl apply -f, kubectl create -f)');
    expect((await k([...n, 'get', 'deployment', 'web'])).stderr).toContain('not found');
    await ok(['delete', 'namespace', ns]);
  });
});
