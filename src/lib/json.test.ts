import { describe, expect, it } from 'vitest';
import { jsonEqual, jsonErrorText } from './json.js';

describe('jsonEqual', () => {
  it('ignores key order and undefined fields, not array order', () => {
    expect(jsonEqual({ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1, d: undefined })).toBe(true);
    expect(jsonEqual([1, 2], [2, 1])).toBe(false);
    expect(jsonEqual({ a: null }, {})).toBe(false);
  });
});

describe('jsonErrorText', () => {
  it('the error string of a JSON answer, else undefined', () => {
    expect(jsonErrorText('{"error":"not ready: informers have not synced yet"}')).toBe('not ready: informers have not synced yet');
    expect(jsonErrorText('{"error":{"code":1}}')).toBeUndefined();
    expect(jsonErrorText('null')).toBeUndefined();
    expect(jsonErrorText('<html>')).toBeUndefined();
    expect(jsonErrorText('')).toBeUndefined();
  });
});
