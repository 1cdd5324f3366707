import { describe, expect, it } from 'vitest';
import { applyDefaults, prune, validate } from './schema.js';
import type { JsonSchema } from './schema.js';

const schema: JsonSchema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      required: ['n'],
      properties: {
        n: { type: 'integer', minimum: 1, maximum: 5 },
        s: { type: 'string', minLength: 2, maxLength: 3, pattern: '^[a-z]+$' },
        e: { type: 'string', enum: ['a', 'b'], default: 'a' },
        l: { type: 'array', minItems: 1, maxItems: 2, items: { type: 'object', properties: { k: { type: 'string', default: 'dk' } } } },
        m: { type: 'object', additionalProperties: { type: 'number' } },
        free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        ios: { 'x-kubernetes-int-or-string': true },
        maybe: { type: 'string', nullable: true },
        bare: { type: 'object' },
      },
    },
  },
};

describe('prune', () => {
  it('drops undeclared fields (not apiVersion/kind/metadata, not under preserve-unknown-fields) and reports them', () => {
    const o = { apiVersion: 'v', kind: 'K', metadata: { name: 'x', anything: 1 }, junk: 1, spec: { n: 1, extra: true, free: { deep: { x: 1 } }, m: { a: 1 }, bare: { gone: 1 }, l: [{ k: 'v', z: 1 }], maybe: null, s: null } };
    expect(prune(o, schema).sort()).toEqual(['junk', 'spec.bare.gone', 'spec.extra', 'spec.l[0].z']);
    expect(o).toEqual({ apiVersion: 'v', kind: 'K', metadata: { name: 'x', anything: 1 }, spec: { n: 1, free: { deep: { x: 1 } }, m: { a: 1 }, bare: {}, l: [{ k: 'v' }], maybe: null } });
  });
});

describe('applyDefaults', () => {
  it('fills absent fields, including inside list items', () => {
    const o = { spec: { n: 1, l: [{}] } };
    applyDefaults(o, schema);
    expect(o).toEqual({ spec: { n: 1, e: 'a', l: [{ k: 'dk' }] } });
  });
});

describe('validate', () => {
  const fields = (spec: unknown) => validate({ spec }, schema).map((c) => `${c.field} ${c.reason}`);
  it('accepts a valid object', () => expect(fields({ n: 3, s: 'ab', e: 'b', l: [{ k: 'x' }], m: { a: 1.5 }, ios: '50%', maybe: null })).toEqual([]));
  it.each([
    [{}, ['spec.n FieldValueRequired']],
    [{ n: 0 }, ['spec.n FieldValueInvalid']],
    [{ n: 6 }, ['spec.n FieldValueInvalid']],
    [{ n: 1.5 }, ['spec.n FieldValueTypeInvalid']],
    [{ n: 1, s: 'A1' }, ['spec.s FieldValueInvalid']],
    [{ n: 1, s: 'a' }, ['spec.s FieldValueInvalid']],
    [{ n: 1, s: 'abcd' }, ['spec.s FieldValueTooLong']],
    [{ n: 1, e: 'c' }, ['spec.e FieldValueNotSupported']],
    [{ n: 1, l: [] }, ['spec.l FieldValueInvalid']],
    [{ n: 1, l: [{}, {}, {}] }, ['spec.l FieldValueTooMany']],
    [{ n: 1, l: [{ k: 1 }] }, ['spec.l[0].k FieldValueTypeInvalid']],
    [{ n: 1, m: { a: 'x' } }, ['spec.m.a FieldValueTypeInvalid']],
    [{ n: 1, ios: true }, ['spec.ios FieldValueTypeInvalid']],
    ['str', ['spec FieldValueTypeInvalid']],
  ])('%j -> %j', (spec, want) => expect(fields(spec)).toEqual(want));
});
