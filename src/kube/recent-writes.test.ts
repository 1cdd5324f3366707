import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../resources/index.js';
import { RecentWrites } from './recent-writes.js';

const obj = (name: string, rv: string, ns = 'a', extra: Record<string, unknown> = {}): KubeObject => ({ apiVersion: 'v1', kind: 'X', metadata: { name, namespace: ns, resourceVersion: rv }, ...extra });

describe('RecentWrites', () => {
  it('a created object counts until the cache has it', () => {
    const recent = new RecentWrites<KubeObject>();
    recent.record(obj('new', '5'), undefined);
    expect(recent.overlay([obj('old', '1')], 'a').map((o) => o.metadata.name).sort()).toEqual(['new', 'old']);
    expect(recent.overlay([obj('old', '1'), obj('new', '5')], 'a')).toHaveLength(2);
    expect(recent.size).toBe(0);
  });

  it('an update wins over the cached version it replaced, until the cache moves past it', () => {
    const recent = new RecentWrites<KubeObject>();
    recent.record(obj('s', '7', 'a', { spec: { woken: true } }), '3');
    expect(recent.overlay([obj('s', '3')], 'a')[0]).toMatchObject({ spec: { woken: true } });
    expect(recent.overlay([obj('s', '7')], 'a')[0]!.metadata.resourceVersion).toBe('7');
    expect(recent.size).toBe(0);
  });

  it('other namespaces are left alone; entries expire', () => {
    let now = 0;
    const recent = new RecentWrites<KubeObject>(1000, () => now);
    recent.record(obj('x', '1', 'b'), undefined);
    expect(recent.overlay([], 'a')).toEqual([]);
    expect(recent.overlay([], 'b')).toHaveLength(1);
    now = 1001;
    expect(recent.overlay([], 'b')).toEqual([]);
  });

  it('over an index: a write joins or leaves the selected objects until the whole cache caught up', () => {
    const recent = new RecentWrites<KubeObject>();
    const pending = (o: KubeObject) => (o.status as { phase?: string } | undefined)?.phase === undefined;
    const cache = new Map<string, KubeObject>([['a/q', obj('q', '2')], ['a/done', obj('done', '4', 'a', { status: { phase: 'fired' } })]]);
    const get = (ns: string, name: string) => cache.get(`${ns}/${name}`);
    recent.record(obj('new', '5'), undefined); // created: pending, not in the cache yet
    recent.record(obj('q', '6', 'a', { status: { phase: 'fired' } }), '2'); // q just fired: it leaves the pending ones
    const selected = recent.overlaySelected([cache.get('a/q')!], 'a', get, pending).map((o) => o.metadata.name).sort();
    expect(selected).toEqual(['new']);
    expect(recent.get('a', 'new', undefined)?.metadata.resourceVersion).toBe('5');
    cache.set('a/new', obj('new', '5'));
    cache.set('a/q', obj('q', '6', 'a', { status: { phase: 'fired' } }));
    expect(recent.overlaySelected([cache.get('a/new')!], 'a', get, pending).map((o) => o.metadata.name)).toEqual(['new']);
    expect(recent.get('a', 'new', cache.get('a/new'))).toBeUndefined();
    expect(recent.size).toBe(0);
  });
});
