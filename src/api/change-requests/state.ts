// The change-request state machine of SPEC §3.1 as a pure function: which action is allowed
// from which status, and the 409 message when it is not. Side effects live in service.ts.
import type { ChangeRequestStatusValue } from '../../resources/index.js';

export type ChangeRequestAction = 'merge' | 'close' | 'reopen' | 'request-changes' | 'edit';

export type Transition =
  | { allowed: true; to: ChangeRequestStatusValue; changed: boolean }
  | { allowed: false; message: string };

const refuse = (message: string): Transition => ({ allowed: false, message });
const go = (from: ChangeRequestStatusValue, to: ChangeRequestStatusValue): Transition => ({ allowed: true, to, changed: from !== to });

/** SPEC §3.1. `number` only makes the message name the change request. */
export function transition(from: ChangeRequestStatusValue, action: ChangeRequestAction, number: number): Transition {
  const cr = `change request #${number}`;
  switch (action) {
    case 'merge':
      if (from === 'open') return go(from, 'merged');
      return refuse(from === 'merged' ? `${cr} is already merged` : `${cr} is closed: reopen it before merging (merge requires status open)`);
    case 'close':
      if (from === 'merged') return refuse(`${cr} is already merged and cannot be closed`);
      // Closing a closed CR changes nothing (docs/change-requests.md).
      return go(from, 'closed');
    case 'reopen':
      if (from === 'closed') return go(from, 'open');
      return refuse(from === 'merged' ? `${cr} is merged and cannot be reopened` : `${cr} is open, not closed: only a closed change request can be reopened`);
    case 'request-changes':
      if (from === 'open') return go(from, 'open');
      return refuse(`${cr} is ${from}: changes can be requested only on an open change request`);
    case 'edit':
      // Title and description stay editable in every state (docs/change-requests.md).
      return go(from, from);
  }
}

/**
 * The most the requested-changes log of one change request may hold (the notes' text, 256 KiB):
 * it lives in the ChangeRequest's status, and Kubernetes refuses an object past 1.5 MiB.
 */
export const REQUESTED_CHANGES_MAX_BYTES = 256 * 1024;

/** The 409 message when `note` would take the log of change request #`number` past its bound; else null. */
export function requestedChangesFull(log: readonly { text: string }[], note: string, number: number): string | null {
  const held = log.reduce((sum, entry) => sum + Buffer.byteLength(entry.text), 0);
  if (held + Buffer.byteLength(note) <= REQUESTED_CHANGES_MAX_BYTES) return null;
  return `change request #${number} already holds ${held} bytes of requested changes (${log.length} note(s)), `
    + `${REQUESTED_CHANGES_MAX_BYTES} at most: write a shorter note, or close it and open a new one`;
}
