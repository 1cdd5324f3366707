import { describe, expect, it } from 'vitest';
import { jsonPatch, mergePatch, strategicMergePatch } from './patch.js';
import type { ApiError } from './status.js';

describe('mergePatch (RFC 7386)', () => {
  it.each([
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: ['b'] }, { a: ['c', 'd'] }, { a: ['c', 'd'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: 'x' }, { a: { b: 1 } }, { a: { b: 1 } }],
  ])('%j + %j = %j', (target, patch, want) => expect(mergePatch(target, patch)).toEqual(want));
});

describe('jsonPatch (RFC 6902)', () => {
  const doc = { a: { b: [1, 2] }, c: 'x' };
  it('add, replace, remove, move, copy, test', () => {
    expect(jsonPatch(doc, [
      { op: 'add', path: '/a/b/-', value: 3 },
      { op: 'add', path: '/a/b/0', value: 0 },
      { op: 'replace', path: '/c', value: 'y' },
      { op: 'copy', from: '/c', path: '/d' },
      { op: 'move', from: '/d', path: '/e~1f' },
      { op: 'remove', path: '/a/b/1' },
      { op: 'test', path: '/e~1f', value: 'y' },
    ])).toEqual({ a: { b: [0, 2, 3] }, c: 'y', 'e/f': 'y' });
    expect(doc).toEqual({ a: { b: [1, 2] }, c: 'x' });
  });
  it('a failed test or a missing path is a 422; a malformed patch is a 400', () => {
    const code = (f: () => unknown) => { try { f(); } catch (e) { return (e as ApiError).code; } return 0; };
    expect(code(() => jsonPatch(doc, [{ op: 'test', path: '/c', value: 'z' }]))).toBe(422);
    expect(code(() => jsonPatch(doc, [{ op: 'remove', path: '/nope' }]))).toBe(422);
    expect(code(() => jsonPatch(doc, [{ op: 'replace', path: '/a/b/5', value: 1 }]))).toBe(422);
    expect(code(() => jsonPatch(doc, { op: 'add' }))).toBe(400);
    expect(code(() => jsonPatch(doc, [{ op: 'frob', path: '/c' }]))).toBe(400);
  });
});

describe('strategicMergePatch', () => {
  const pod = {
    metadata: { labels: { a: '1' }, finalizers: ['f1'] },
    spec: {
      containers: [{ name: 'a', image: 'i', env: [{ name: 'X', value: '1' }], ports: [{ containerPort: 80 }] }, { name: 'b', image: 'j' }],
      tolerations: [{ key: 'k' }],
    },
  };
  it('merges maps and named lists, replaces other lists, honours directives', () => {
    const out = strategicMergePatch(pod, {
      metadata: { labels: { b: '2' }, finalizers: ['f2'] },
      spec: {
        containers: [{ name: 'a', env: [{ name: 'Y', value: '2' }], ports: [{ containerPort: 81 }] }, { name: 'b', $patch: 'delete' }, { name: 'c', image: 'k' }],
        tolerations: [{ key: 'z' }],
      },
    }) as typeof pod;
    expect(out.metadata).toEqual({ labels: { a: '1', b: '2' }, finalizers: ['f1', 'f2'] });
    expect(out.spec.containers).toEqual([
      { name: 'a', image: 'i', env: [{ name: 'X', value: '1' }, { name: 'Y', value: '2' }], ports: [{ containerPort: 80 }, { containerPort: 81 }] },
      { name: 'c', image: 'k' },
    ]);
    expect(out.spec.tolerations).toEqual([{ key: 'z' }]);
  });
  it('$setElementOrder reorders, $deleteFromPrimitiveList removes, $patch: replace replaces, null deletes', () => {
    const out = strategicMergePatch(pod, {
      metadata: { labels: { $patch: 'replace', z: '9' }, '$deleteFromPrimitiveList/finalizers': ['f1'] },
      spec: { '$setElementOrder/containers': [{ name: 'b' }, { name: 'a' }], containers: [{ name: 'a', image: 'i2' }], tolerations: null },
    }) as typeof pod;
    expect(out.metadata).toEqual({ labels: { z: '9' }, finalizers: [] });
    expect(out.spec.containers.map((c) => `${c.name}:${c.image}`)).toEqual(['b:j', 'a:i2']);
    expect(out.spec).not.toHaveProperty('tolerations');
  });
});
