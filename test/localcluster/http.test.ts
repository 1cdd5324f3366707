// The REST protocol as clients see it: status codes and Status bodies, patch formats, selectors,
// tables, paging, watch details, discovery and openapi.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import YAML from 'yaml';
import { kubeconfigYaml } from '../../src/localcluster/index.js';
import { FIXTURES, WIDGETS, eventually, run, startTestCluster, widget } from './helpers.js';
import type { TestCluster } from './helpers.js';

let tc: TestCluster;
const CMS = '/api/v1/namespaces/default/configmaps';
beforeAll(async () => {
  tc = await startTestCluster({ bookmarkIntervalMs: 200 });
  const crd = YAML.parse(readFileSync(path.join(FIXTURES, 'widget-crd.yaml'), 'utf8'));
  expect((await tc.api('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd)).status).toBe(201);
});
afterAll(async () => tc?.close());

describe('authentication', () => {
  it('answers 401 with the Kubernetes Status body to a request without a token or with a wrong one, for every path and verb; kubectl with a wrong token fails', async () => {
    const unauthorized = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 };
    const cm = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'anonymous' } });
    for (const authorization of ['', 'Bearer not-the-token', `Bearer ${tc.cluster.token}x`, `Basic ${Buffer.from(`admin:${tc.cluster.token}`).toString('base64')}`]) {
      for (const [method, urlPath, body] of [['GET', '/api/v1/namespaces/default/secrets'], ['GET', '/api'], ['GET', '/version'], ['GET', `${CMS}?watch=1`], ['POST', CMS, cm], ['DELETE', `${CMS}/c`]] as const) {
        const res = await tc.fetch(urlPath, { method, headers: { authorization, 'content-type': 'application/json' }, body });
        expect(res.status, `${authorization} ${method} ${urlPath}`).toBe(401);
        expect(await res.json()).toEqual(unauthorized);
      }
    }
    expect((await tc.api('GET', `${CMS}/anonymous`)).status).toBe(404);
    const wrong = path.join(tc.dir, 'wrong.kubeconfig');
    writeFileSync(wrong, kubeconfigYaml(tc.cluster.url, { token: 'not-the-token', ca: tc.cluster.ca }), { mode: 0o600 });
    const denied = await run('kubectl', ['--kubeconfig', wrong, '--cache-dir', path.join(tc.dir, 'wrong-cache'), 'get', 'secrets'], { env: { ...process.env, HOME: tc.dir } });
    expect(denied.code).not.toBe(0);
    expect(denied.stderr).toContain('You must be logged in to the server');
    expect(tc.cluster.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
  });
});

describe('status codes', () => {
  it('404 NotFound, 409 AlreadyExists, 409 Conflict with Kubernetes Status bodies', async () => {
    const missing = await tc.api('GET', `${CMS}/nope`);
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'NotFound', code: 404, message: 'configmaps "nope" not found', details: { name: 'nope', kind: 'configmaps' } });

    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: '1' } };
    const created = await tc.api('POST', CMS, cm);
    expect(created.status).toBe(201);
    expect(created.body.metadata).toMatchObject({ name: 'c', namespace: 'default', uid: expect.any(String), resourceVersion: expect.any(String), creationTimestamp: expect.any(String) });
    const again = await tc.api('POST', CMS, cm);
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ reason: 'AlreadyExists', message: 'configmaps "c" already exists' });

    const v1 = created.body;
    expect((await tc.api('PUT', `${CMS}/c`, { ...v1, data: { a: '2' } })).status).toBe(200);
    const stale = await tc.api('PUT', `${CMS}/c`, { ...v1, data: { a: '3' } });
    expect(stale.status).toBe(409);
    expect(stale.body.reason).toBe('Conflict');
    expect(((await tc.api('GET', `${CMS}/c`)).body.data as Record<string, string>).a).toBe('2');
  });

  it('400 for undecodable bodies and mismatched names; 404 for a missing namespace; 405 for a wrong method', async () => {
    expect((await tc.api('POST', CMS, '{not json')).status).toBe(400);
    const renamed = await tc.api('PUT', `${CMS}/c`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'other' } });
    expect(renamed.status).toBe(400);
    expect(renamed.body.message).toBe('the name of the object (other) does not match the name on the URL (c)');
    const wrongKind = await tc.api('POST', CMS, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'x' } });
    expect(wrongKind.status).toBe(400);
    const noNs = await tc.api('POST', '/api/v1/namespaces/absent/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } });
    expect(noNs.status).toBe(404);
    expect(noNs.body.message).toBe('namespaces "absent" not found');
    expect((await tc.api('POST', `${CMS}/c`, {})).status).toBe(405);
    expect((await tc.api('GET', '/apis/nothing.example/v1/things')).status).toBe(404);
  });

  it('403 for deleting the default namespace', async () => {
    const r = await tc.api('DELETE', '/api/v1/namespaces/default');
    expect(r.status).toBe(403);
    expect(r.body.reason).toBe('Forbidden');
    expect((await tc.api('GET', '/api/v1/namespaces/default')).status).toBe(200);
  });

  it('an object whose owner does not exist is garbage-collected', async () => {
    const orphan = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'orphan', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'ghost', uid: 'no-such-uid' }] } };
    expect((await tc.api('POST', CMS, orphan)).status).toBe(201);
    await eventually(async () => (await tc.api('GET', `${CMS}/orphan`)).status === 404, 'the orphan to be collected');
  });

  it('422 for an invalid name, with field causes', async () => {
    const r = await tc.api('POST', CMS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'Bad_Name' } });
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject({ reason: 'Invalid', details: { causes: [expect.objectContaining({ field: 'metadata.name', reason: 'FieldValueInvalid' })] } });
    // RBAC names are path segments: colons are fine, slashes are not.
    const role = (name: string) => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name }, rules: [] });
    expect((await tc.api('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', role('system:svc:reader'))).status).toBe(201);
    expect((await tc.api('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', role('a%2Fb'))).status).toBe(422);
  });

  it('422 for annotations past 256 KiB in all, as Kubernetes (a create and a patch that would grow them), and nothing stored', async () => {
    const cm = (name: string, annotations: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, annotations } });
    const half = 'x'.repeat(128 * 1024);
    const r = await tc.api('POST', CMS, cm('annotated', { a: half, b: half }));
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject({ reason: 'Invalid', details: { causes: [{ field: 'metadata.annotations', reason: 'FieldValueTooLong', message: 'Too long: must have at most 262144 bytes' }] } });
    expect((await tc.api('GET', `${CMS}/annotated`)).status).toBe(404);
    expect((await tc.api('POST', CMS, cm('annotated', { a: 'x'.repeat(256 * 1024 - 1) }))).status).toBe(201); // 256 KiB with its key: the limit itself
    const grown = await tc.api('PATCH', `${CMS}/annotated`, { metadata: { annotations: { b: 'é' } } }, 'application/merge-patch+json');
    expect(grown.status).toBe(422);
    expect(Object.keys((await tc.api('GET', `${CMS}/annotated`)).body.metadata!.annotations!)).toEqual(['a']);
  });

  it('custom resources: PUT without resourceVersion is 422; a type error names the field', async () => {
    const created = await tc.api('POST', WIDGETS, widget('w', { size: 2 }));
    expect(created.status).toBe(201);
    const noRv = await tc.api('PUT', `${WIDGETS}/w`, widget('w', { size: 3 }));
    expect(noRv.status).toBe(422);
    const typeErr = await tc.api('POST', WIDGETS, widget('t', { size: 'big', tags: [1] }));
    expect(typeErr.status).toBe(422);
    expect(typeErr.body.message).toBe('Widget.test.svc.dev "t" is invalid: [spec.size: Invalid value: "string": spec.size in body must be of type integer: "string", spec.tags[0]: Invalid value: "integer": spec.tags[0] in body must be of type string: "integer"]');
    expect((await tc.api('GET', `${WIDGETS}/t`)).status).toBe(404);
  });

  it('unknown fields: Strict is 400, Ignore drops them quietly, Warn (the default) drops them with a Warning header', async () => {
    const doc = (name: string) => widget(name, { size: 2, bogus: 'x' });
    const strict = await tc.api('POST', `${WIDGETS}?fieldValidation=Strict`, doc('strict'));
    expect(strict.status).toBe(400);
    expect(strict.body.message).toBe('strict decoding error: unknown field "spec.bogus"');
    const ignored = await tc.api('POST', `${WIDGETS}?fieldValidation=Ignore`, doc('ignored'));
    expect(ignored.status).toBe(201);
    expect(ignored.headers.get('warning')).toBeNull();
    for (const [name, query] of [['warned', '?fieldValidation=Warn'], ['default', '']] as const) {
      const warned = await tc.api('POST', `${WIDGETS}${query}`, doc(name));
      expect(warned.status).toBe(201);
      expect(warned.headers.get('warning')).toBe('299 - "unknown field \\"spec.bogus\\""');
      expect((warned.body as { spec: Record<string, unknown> }).spec.bogus).toBeUndefined();
    }
    const patched = await tc.api('PATCH', `${WIDGETS}/warned`, { spec: { other: 1 } }, 'application/merge-patch+json');
    expect(patched.headers.get('warning')).toBe('299 - "unknown field \\"spec.other\\""');
    for (const name of ['ignored', 'warned', 'default']) expect((await tc.api('DELETE', `${WIDGETS}/${name}`)).status).toBe(200);
  });
});

describe('patches', () => {
  it('merge patch; JSON patch with test (failing test is 422 and changes nothing); strategic merge is 415 on custom resources', async () => {
    const merged = await tc.api('PATCH', `${WIDGETS}/w`, { spec: { color: 'blue', tags: ['x'] } }, 'application/merge-patch+json');
    expect(merged.body.spec).toEqual({ size: 2, color: 'blue', tags: ['x'] });
    expect(merged.body.metadata!.generation).toBe(2);

    const ok = await tc.api('PATCH', `${WIDGETS}/w`, [{ op: 'test', path: '/spec/color', value: 'blue' }, { op: 'replace', path: '/spec/size', value: 7 }], 'application/json-patch+json');
    expect(ok.status).toBe(200);
    expect((ok.body.spec as { size: number }).size).toBe(7);
    const failed = await tc.api('PATCH', `${WIDGETS}/w`, [{ op: 'test', path: '/spec/color', value: 'red' }, { op: 'replace', path: '/spec/size', value: 8 }], 'application/json-patch+json');
    expect(failed.status).toBe(422);
    expect(((await tc.api('GET', `${WIDGETS}/w`)).body.spec as { size: number }).size).toBe(7);

    const smp = await tc.api('PATCH', `${WIDGETS}/w`, { spec: { size: 1 } }, 'application/strategic-merge-patch+json');
    expect(smp.status).toBe(415);
    expect(smp.body.reason).toBe('UnsupportedMediaType');
    expect((await tc.api('PATCH', `${WIDGETS}/w`, 'spec: {}', 'application/apply-patch+yaml')).status).toBe(415);
  });

  it('a patch that changes nothing keeps the resourceVersion; one that violates the schema is 422', async () => {
    const before = await tc.api('GET', `${WIDGETS}/w`);
    const same = await tc.api('PATCH', `${WIDGETS}/w`, { spec: { size: 7 } }, 'application/merge-patch+json');
    expect(same.body.metadata!.resourceVersion).toBe(before.body.metadata!.resourceVersion);
    const bad = await tc.api('PATCH', `${WIDGETS}/w`, { spec: { size: 1000 } }, 'application/merge-patch+json');
    expect(bad.status).toBe(422);
    expect(bad.body.message).toContain('spec.size in body should be less than or equal to 100');
  });

  it('strategic merge on built-ins merges containers by name and deletes with $patch', async () => {
    const deploy = {
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', labels: { a: '1' } },
      spec: { selector: { matchLabels: { app: 'd' } }, template: { metadata: { labels: { app: 'd' } }, spec: { containers: [{ name: 'a', image: 'i:1' }, { name: 'b', image: 'j:1' }] } } },
    };
    expect((await tc.api('POST', '/apis/apps/v1/namespaces/default/deployments', deploy)).status).toBe(201);
    const patch = { metadata: { labels: { b: '2' } }, spec: { template: { spec: { containers: [{ name: 'b', image: 'j:2' }, { name: 'a', $patch: 'delete' }] } } } };
    const r = await tc.api('PATCH', '/apis/apps/v1/namespaces/default/deployments/d', patch, 'application/strategic-merge-patch+json');
    expect(r.status).toBe(200);
    expect(r.body.metadata!.labels).toEqual({ a: '1', b: '2' });
    expect((r.body.spec as { template: { spec: { containers: unknown[] } } }).template.spec.containers).toEqual([{ name: 'b', image: 'j:2' }]);
  });
});

describe('lists', () => {
  it('field selectors, limit/continue and all-namespaces lists', async () => {
    await tc.api('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'other' } });
    for (const n of ['p1', 'p2', 'p3']) await tc.api('POST', '/api/v1/namespaces/other/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: n } });
    const byName = await tc.api('GET', `/api/v1/configmaps?fieldSelector=${encodeURIComponent('metadata.name=p2')}`);
    expect((byName.body.items as { metadata: { name: string } }[]).map((i) => i.metadata.name)).toEqual(['p2']);
    const notOther = await tc.api('GET', `/api/v1/configmaps?fieldSelector=${encodeURIComponent('metadata.namespace!=other')}`);
    expect((notOther.body.items as { metadata: { namespace: string } }[]).every((i) => i.metadata.namespace !== 'other')).toBe(true);
    expect((await tc.api('GET', '/api/v1/configmaps?fieldSelector=spec.nope%3D1')).status).toBe(400);

    const page1 = await tc.api('GET', '/api/v1/namespaces/other/configmaps?limit=2');
    expect((page1.body.items as unknown[]).length).toBe(2);
    const token = page1.body.metadata!.continue as string;
    const page2 = await tc.api('GET', `/api/v1/namespaces/other/configmaps?limit=2&continue=${token}`);
    expect((page2.body.items as { metadata: { name: string } }[]).map((i) => i.metadata.name)).toEqual(['p3']);
    expect(page2.body.metadata!.continue).toBeUndefined();
  });

  it('events select by involvedObject', async () => {
    const ev = (name: string, obj: string) => ({ apiVersion: 'v1', kind: 'Event', metadata: { name }, involvedObject: { kind: 'Widget', name: obj, namespace: 'default' }, reason: 'R', message: 'm', type: 'Normal' });
    await tc.api('POST', '/api/v1/namespaces/default/events', ev('e1', 'w'));
    await tc.api('POST', '/api/v1/namespaces/default/events', ev('e2', 'other'));
    const r = await tc.api('GET', `/api/v1/namespaces/default/events?fieldSelector=${encodeURIComponent('involvedObject.name=w,involvedObject.kind=Widget')}`);
    expect((r.body.items as { metadata: { name: string } }[]).map((i) => i.metadata.name)).toEqual(['e1']);
  });

  it('as=Table: printer columns with Name, and PartialObjectMetadata rows', async () => {
    await tc.api('PATCH', `${WIDGETS}/w/status`, { status: { conditions: [{ type: 'Ready', status: 'False' }] } }, 'application/merge-patch+json');
    const r = await tc.api('GET', WIDGETS, undefined, 'application/json', 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json');
    expect(r.body.kind).toBe('Table');
    expect((r.body.columnDefinitions as { name: string }[]).map((c) => c.name)).toEqual(['Name', 'Size', 'Color', 'Ready', 'Age']);
    const rows = r.body.rows as { cells: unknown[]; object: { kind: string } }[];
    expect(rows[0]!.cells.slice(0, 4)).toEqual(['w', 7, 'blue', 'False']);
    expect(rows[0]!.cells[4]).toMatch(/^\d+s$/);
    expect(rows[0]!.object.kind).toBe('PartialObjectMetadata');
  });
});

describe('watch', () => {
  it('streams newline-delimited events as soon as headers are flushed; ends at timeoutSeconds', async () => {
    const rv = (await tc.api('GET', CMS)).body.metadata!.resourceVersion as string;
    const res = await tc.fetch(`${CMS}?watch=1&resourceVersion=${rv}&timeoutSeconds=1&allowWatchBookmarks=true`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    await tc.api('POST', CMS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'watched' } });
    await tc.api('DELETE', `${CMS}/watched`);
    const lines = (await res.text()).trim().split('\n').map((l) => JSON.parse(l) as { type: string; object: { kind: string; metadata: { name: string; resourceVersion: string } } });
    const changes = lines.filter((l) => l.type !== 'BOOKMARK');
    expect(changes.map((l) => `${l.type} ${l.object.metadata.name}`)).toEqual(['ADDED watched', 'DELETED watched']);
    const bookmarks = lines.filter((l) => l.type === 'BOOKMARK');
    expect(bookmarks.length).toBeGreaterThan(0);
    expect(bookmarks.at(-1)!.object).toEqual({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { resourceVersion: changes[1]!.object.metadata.resourceVersion } });
  });

  it('cuts a watcher that stops reading once it falls 16 MiB behind (it watches again from its last version)', async () => {
    const rv = (await tc.api('GET', CMS)).body.metadata!.resourceVersion as string;
    const res = await tc.fetch(`${CMS}?watch=1&resourceVersion=${rv}&timeoutSeconds=120`);
    expect(res.status).toBe(200);
    // its body is not read: 200 versions of a 200 KB ConfigMap (40 MB) pile up behind it
    const bulky = (i: number) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'bulky' }, data: { v: `${i}`.padEnd(200 * 1024, 'x') } });
    expect((await tc.api('POST', CMS, bulky(0))).status).toBe(201);
    for (let i = 1; i < 200; i++) expect((await tc.api('PUT', `${CMS}/bulky`, bulky(i))).status).toBe(200);
    // held, it would end only at timeoutSeconds, with every version read
    await expect(res.text()).rejects.toThrow();
    expect((await tc.api('DELETE', `${CMS}/bulky`)).status).toBe(200);
  }, 60_000);

  it('deletecollection deletes what the selector selects', async () => {
    for (const [name, app] of [['dc1', 'x'], ['dc2', 'x'], ['dc3', 'y']]) {
      await tc.api('POST', CMS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { app: app! } } });
    }
    expect((await tc.api('DELETE', `${CMS}?labelSelector=app%3Dx`)).status).toBe(200);
    const left = await tc.api('GET', `${CMS}?labelSelector=app`);
    expect((left.body.items as { metadata: { name: string } }[]).map((i) => i.metadata.name)).toEqual(['dc3']);
  });

  it('a watch on a label selector sees an object leave the selection as DELETED', async () => {
    await tc.api('POST', CMS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'sel', labels: { keep: 'yes' } } });
    const rv = (await tc.api('GET', `${CMS}/sel`)).body.metadata!.resourceVersion as string;
    await tc.api('PATCH', `${CMS}/sel`, { metadata: { labels: { keep: 'no' } } }, 'application/merge-patch+json');
    const res = await tc.fetch(`/api/v1/watch/namespaces/default/configmaps?labelSelector=keep%3Dyes&resourceVersion=${rv}&timeoutSeconds=1`);
    const lines = (await res.text()).trim().split('\n').map((l) => JSON.parse(l) as { type: string });
    expect(lines.map((l) => l.type)).toEqual(['DELETED']);
  });
});

describe('discovery and openapi', () => {
  it('lists groups, resources with verbs, short names and categories, and serves the CRD kinds', async () => {
    const groups = await tc.api('GET', '/apis');
    expect((groups.body.groups as { name: string }[]).map((g) => g.name)).toEqual(expect.arrayContaining(['apps', 'test.svc.dev', 'coordination.k8s.io', 'rbac.authorization.k8s.io']));
    const res = await tc.api('GET', '/apis/test.svc.dev/v1');
    expect(res.body.resources).toEqual([
      expect.objectContaining({ name: 'widgets', kind: 'Widget', namespaced: true, shortNames: ['wd'], categories: ['testcat'], verbs: expect.arrayContaining(['get', 'list', 'watch', 'create', 'patch']) }),
      expect.objectContaining({ name: 'widgets/status', verbs: ['get', 'patch', 'update'] }),
    ]);
    expect((await tc.api('GET', '/version')).body.gitVersion).toMatch(/^v1\.\d+\.\d+$/);
    expect((await tc.fetch(`/healthz`)).status).toBe(200);
  });

  it('answers /openapi/v2 in protobuf when asked, and lists /openapi/v3 documents (kubectl explain)', async () => {
    const pb = await tc.fetch(`/openapi/v2`, { headers: { accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' } });
    expect(pb.headers.get('content-type')).toBe('application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
    const bytes = Buffer.from(await pb.arrayBuffer());
    expect(bytes.subarray(0, 5)).toEqual(Buffer.from([0x0a, 0x03, 0x32, 0x2e, 0x30])); // field 1 "2.0"
    const v3 = await tc.fetch(`/openapi/v3`);
    expect(v3.status).toBe(200);
    expect(Object.keys(((await v3.json()) as { paths: Record<string, unknown> }).paths)).toContain('apis/test.svc.dev/v1');
  });

  it('a CRD replaced without its status keeps the status the server wrote', async () => {
    const crdPath = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.test.svc.dev';
    const { status: _status, ...rest } = (await tc.api('GET', crdPath)).body;
    const replaced = await tc.api('PUT', crdPath, rest);
    expect(replaced.status).toBe(200);
    expect((replaced.body.status as { conditions: { type: string; status: string }[] }).conditions).toEqual(expect.arrayContaining([expect.objectContaining({ type: 'Established', status: 'True' })]));
  });

  it('deleting a CRD removes its kind and its objects', async () => {
    const del = await tc.api('DELETE', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.test.svc.dev');
    expect(del.status).toBe(200);
    expect((await tc.api('GET', WIDGETS)).status).toBe(404);
    expect((await tc.api('GET', '/apis/test.svc.dev/v1')).status).toBe(404);
  });
});

describe('stopping', () => {
  it('a stop cuts every connection, one still in its TLS handshake too, and frees the port at once (the manager test\'s outage hung for 60 s)', async () => {
    const own = await startTestCluster();
    const { port } = own.cluster;
    // a client that connected and has not sent its ClientHello yet
    const midHandshake = net.connect(port, '127.0.0.1');
    await new Promise((resolve) => midHandshake.once('connect', resolve));
    const cut = new Promise((resolve) => midHandshake.once('close', resolve));
    await own.close();
    await cut;
    // the port is free: a cluster starts on it again
    const again = await startTestCluster({ port });
    expect((await again.fetch('/healthz')).status).toBe(200);
    await again.close();
  });
});
