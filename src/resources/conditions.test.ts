import { describe, expect, it } from 'vitest';
import { getCondition, isFalse, isTrue, kubeTime, MAX_CONDITION_MESSAGE, removeCondition, setCondition } from './conditions.js';

const t0 = new Date('2026-01-01T00:00:00.123Z');
const t1 = new Date('2026-01-01T00:05:00Z');

describe('conditions', () => {
  it('adds a condition with a second-precision transition time', () => {
    const list = setCondition(undefined, { type: 'Ready', status: 'False', reason: 'Pending', message: 'waiting', observedGeneration: 1 }, t0);
    expect(list).toEqual([
      { type: 'Ready', status: 'False', reason: 'Pending', message: 'waiting', observedGeneration: 1, lastTransitionTime: '2026-01-01T00:00:00Z' },
    ]);
  });

  it('clips a message past metav1.Condition\'s 32 KiB (a sandbox\'s own words may be quoted)', () => {
    const exact = 'x'.repeat(MAX_CONDITION_MESSAGE);
    expect(setCondition([], { type: 'Ready', status: 'False', reason: 'R', message: exact }, t0)[0]!.message).toBe(exact);
    const clipped = setCondition([], { type: 'Ready', status: 'False', reason: 'R', message: `${exact}more` }, t0)[0]!.message;
    expect(clipped).toHaveLength(MAX_CONDITION_MESSAGE);
    expect(clipped.endsWith('x…')).toBe(true);
  });

  it('keeps lastTransitionTime when only reason or message change', () => {
    const first = setCondition([], { type: 'Ready', status: 'False', reason: 'Pending', message: 'a' }, t0);
    const second = setCondition(first, { type: 'Ready', status: 'False', reason: 'StillPending', message: 'b' }, t1);
    expect(second[0]).toMatchObject({ reason: 'StillPending', message: 'b', lastTransitionTime: kubeTime(t0) });
  });

  it('moves lastTransitionTime when the status changes, and leaves other conditions alone', () => {
    let list = setCondition([], { type: 'RepositoryReachable', status: 'True', reason: 'Fetched', message: '' }, t0);
    list = setCondition(list, { type: 'Ready', status: 'False', reason: 'Pending', message: '' }, t0);
    list = setCondition(list, { type: 'Ready', status: 'True', reason: 'Ok', message: '' }, t1);
    expect(list.map((c) => c.type)).toEqual(['RepositoryReachable', 'Ready']);
    expect(getCondition(list, 'Ready')?.lastTransitionTime).toBe('2026-01-01T00:05:00Z');
    expect(getCondition(list, 'RepositoryReachable')?.lastTransitionTime).toBe('2026-01-01T00:00:00Z');
  });

  it('answers isTrue / isFalse, with Unknown and absent being neither', () => {
    let list = setCondition([], { type: 'Ready', status: 'Unknown', reason: 'Starting', message: '' });
    expect(isTrue(list, 'Ready')).toBe(false);
    expect(isFalse(list, 'Ready')).toBe(false);
    list = setCondition(list, { type: 'Ready', status: 'True', reason: 'Ok', message: '' });
    expect(isTrue(list, 'Ready')).toBe(true);
    expect(isTrue(list, 'ManifestValid')).toBe(false);
    expect(isTrue(undefined, 'Ready')).toBe(false);
    expect(removeCondition(list, 'Ready')).toEqual([]);
  });

  it('does not mutate its input', () => {
    const first = setCondition([], { type: 'Ready', status: 'False', reason: 'A', message: '' }, t0);
    const copy = structuredClone(first);
    setCondition(first, { type: 'Ready', status: 'True', reason: 'B', message: '' }, t1);
    expect(first).toEqual(copy);
  });
});
