import { describe, expect, it } from 'vitest';
import { humanDuration, jsonPath } from './table.js';

describe('jsonPath (printer column subset)', () => {
  const o = { a: { b: 1 }, list: [{ type: 'Ready', status: 'True' }, { type: 'Synced', status: 'False' }], labels: { 'x.y/z': 'v' } };
  it.each([
    ['.a.b', [1]],
    ['.list[1].status', ['False']],
    ['.list[?(@.type=="Ready")].status', ['True']],
    [".list[?(@.type=='Synced')].status", ['False']],
    ['.list[*].type', ['Ready', 'Synced']],
    [".labels['x.y/z']", ['v']],
    ['{.a.b}', [1]],
    ['.missing.b', []],
  ])('%s', (path, want) => expect(jsonPath(o, path)).toEqual(want));
});

describe('humanDuration', () => {
  it.each([
    [-5000, '<invalid>'], [0, '0s'], [59_000, '59s'], [119_000, '119s'], [150_000, '2m30s'], [600_000, '10m'],
    [3 * 3600_000 + 5 * 60_000, '3h5m'], [10 * 3600_000, '10h'], [3 * 86400_000, '3d'], [3 * 86400_000 + 3600_000, '3d1h'], [30 * 86400_000, '30d'],
  ])('%d ms -> %s', (ms, want) => expect(humanDuration(ms)).toBe(want));
});
