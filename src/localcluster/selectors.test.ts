import { describe, expect, it } from 'vitest';
import { fieldSelector, labelSelector } from './selectors.js';
import type { KObject } from './status.js';

const obj = (labels: Record<string, string>, extra: Record<string, unknown> = {}): KObject => ({ kind: 'Event', metadata: { name: 'n', namespace: 'ns', labels }, ...extra });

describe('labelSelector', () => {
  const o = obj({ app: 'web', tier: 'front', 'example.com/x': 'y' });
  it.each([
    ['', true], ['app=web', true], ['app==web', true], ['app!=web', false], ['app=db', false],
    ['tier in (front, back)', true], ['tier notin (front)', false], ['tier notin (back)', true],
    ['app', true], ['!app', false], ['!missing', true], ['missing!=x', true], ['missing in (x)', false],
    ['app=web,tier=front', true], ['app=web,tier=back', false], ['example.com/x=y', true],
  ])('%s -> %s', (sel, want) => expect(labelSelector(sel)(o)).toBe(want));
  it('rejects malformed selectors with 400', () => {
    for (const bad of ['a=b=c', 'in (x)', 'a in x', 'a=(b)']) expect(() => labelSelector(bad)).toThrow(expect.objectContaining({ code: 400 }));
  });
});

describe('fieldSelector', () => {
  const ev = obj({}, { involvedObject: { name: 'w', kind: 'Widget' }, type: 'Normal' });
  it.each([
    ['metadata.name=n', true], ['metadata.namespace!=ns', false], ['involvedObject.name=w,involvedObject.kind=Widget', true],
    ['involvedObject.name=other', false], ['type==Normal', true],
  ])('%s -> %s', (sel, want) => expect(fieldSelector(sel, 'Event')(ev)).toBe(want));
  it('rejects unsupported fields with 400', () => {
    expect(() => fieldSelector('spec.foo=1', 'ConfigMap')).toThrow(expect.objectContaining({ code: 400, message: 'field label not supported: spec.foo' }));
  });
});
