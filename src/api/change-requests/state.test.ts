// SPEC §3.1 as a table: every (status, action) pair, allowed or 409.
import { describe, expect, it } from 'vitest';
import { REQUESTED_CHANGES_MAX_BYTES, requestedChangesFull, transition, type ChangeRequestAction } from './state.js';
import type { ChangeRequestStatusValue } from '../../resources/index.js';

const rows: [ChangeRequestStatusValue, ChangeRequestAction, ChangeRequestStatusValue | RegExp][] = [
  ['open', 'merge', 'merged'],
  ['open', 'close', 'closed'],
  ['closed', 'reopen', 'open'],
  ['merged', 'close', /already merged and cannot be closed/],
  ['merged', 'reopen', /merged and cannot be reopened/],
  ['closed', 'merge', /closed: reopen it before merging/],
  ['merged', 'merge', /already merged/],
  ['open', 'reopen', /open, not closed/],
  ['merged', 'request-changes', /is merged: changes can be requested only on an open/],
  ['closed', 'request-changes', /is closed: changes can be requested only on an open/],
  ['open', 'request-changes', 'open'],
  ['closed', 'close', 'closed'],
  ['open', 'edit', 'open'],
  ['merged', 'edit', 'merged'],
  ['closed', 'edit', 'closed'],
];

describe('change-request state machine (SPEC §3.1)', () => {
  it.each(rows)('%s + %s -> %s', (from, action, expected) => {
    const result = transition(from, action, 7);
    if (expected instanceof RegExp) {
      expect(result.allowed).toBe(false);
      if (!result.allowed) {
        expect(result.message).toMatch(expected);
        expect(result.message).toContain('#7');
      }
    } else {
      expect(result).toEqual({ allowed: true, to: expected, changed: from !== expected });
    }
  });
});

describe('the requested-changes log is bounded', () => {
  const note = (bytes: number) => ({ text: 'x'.repeat(bytes) });
  it.each([
    [[], REQUESTED_CHANGES_MAX_BYTES, null],
    [[note(REQUESTED_CHANGES_MAX_BYTES - 10)], 'x'.repeat(10), null],
    [[note(REQUESTED_CHANGES_MAX_BYTES - 10)], 'x'.repeat(11), `change request #7 already holds ${REQUESTED_CHANGES_MAX_BYTES - 10} bytes of requested changes (1 note(s)), ${REQUESTED_CHANGES_MAX_BYTES} at most: write a shorter note, or close it and open a new one`],
    [[note(REQUESTED_CHANGES_MAX_BYTES - 10)], 'é'.repeat(6), /already holds/], // bytes, not characters
  ] as const)('%#', (log, next, expected) => {
    const text = typeof next === 'number' ? 'x'.repeat(next) : next;
    const result = requestedChangesFull(log, text, 7);
    if (expected instanceof RegExp) expect(result).toMatch(expected);
    else expect(result).toBe(expected);
  });
});
