// SPEC §3.1 as a table: every (status, action) pair, allowed or 409.
import { describe, expect, it } from 'vitest';
import { transition, type ChangeRequestAction } from './state.js';
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
