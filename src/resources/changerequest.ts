import { z } from 'zod';
import { localRef, statusBase, timestamp } from './common.js';
import type { ObjectIndex, Resource } from './meta.js';

/** SPEC §3.1 change-request states. */
export const CHANGE_REQUEST_STATUSES = ['open', 'merged', 'closed'] as const;
export const ChangeRequestStatusValueSchema = z.enum(CHANGE_REQUEST_STATUSES);
export type ChangeRequestStatusValue = z.infer<typeof ChangeRequestStatusValueSchema>;

/**
 * SPEC §2.2 fields that never change after create. cr_id = metadata.uid, account_id = the
 * namespace uid, project_id = the Project uid, created_at = metadata.creationTimestamp.
 */
export const ChangeRequestSpecSchema = z
  .object({
    projectRef: localRef('The owning Project; the change request is removed with it.'),
    number: z.number().int().min(1).describe('Per-project display number; unique, never reused.'),
    title: z.string().min(1).describe('Title.'),
    description: z.string().default('').describe('Description.'),
    baseRef: z.string().min(1).describe('Branch merged into.'),
    headRef: z.string().min(1).describe('Branch merged from.'),
    originSessionId: z.string().nullable().default(null).describe('Session that opened it; null once that session is deleted.'),
    createdBy: z.string().min(1).describe('User id (UUID) of the creator.'),
  })
  .describe('A change request (SPEC §2.2).');
export type ChangeRequestSpec = z.infer<typeof ChangeRequestSpecSchema>;
/** What a writer must give (fields with defaults optional). */
export type ChangeRequestSpecInput = z.input<typeof ChangeRequestSpecSchema>;

export const RequestedChangeSchema = z
  .object({
    text: z.string().describe('The note.'),
    by: z.string().describe('User id (UUID) of the author.'),
    at: timestamp().describe('When it was written.'),
  })
  .describe('A change-request note (REST metadata.requested_changes).');
export type RequestedChange = z.infer<typeof RequestedChangeSchema>;

export const MergeClaimSchema = z
  .object({
    holder: z.string().min(1).describe('The API replica merging (SVC_POD_NAME, else the host name).'),
    instance: z.string().min(1).describe('That process (a new one per start): a claim of the same holder with another instance is dead.'),
    by: z.string().min(1).describe('User id (UUID) of who asked for the merge.'),
    headSha: z.string().min(1).describe('The head commit being merged.'),
    baseSha: z.string().min(1).describe('The base tip the merge starts from.'),
    claimedAt: timestamp().describe('When the merge started; a claim older than the claim timeout is dead.'),
  })
  .describe('A merge in progress (docs/change-requests.md): only its holder pushes.');
export type MergeClaim = z.infer<typeof MergeClaimSchema>;

export const FEEDBACK_STATES = ['queued', 'delivered', 'undelivered'] as const;

export const FeedbackDeliverySchema = z
  .object({
    index: z.number().int().min(0).describe('Position of the note in requestedChanges.'),
    state: z.enum(FEEDBACK_STATES).describe('queued on the originating session, delivered to its root engine session, or undelivered (message says why).'),
    message: z.string().describe('What happened, for people.'),
    at: timestamp().describe('When the note reached this state (queued: when it was queued).'),
  })
  .describe('Delivery of one change-request note to the originating session (request-changes feedback).');
export type FeedbackDelivery = z.infer<typeof FeedbackDeliverySchema>;

export const ChangeRequestStatusSchema = z
  .object({
    ...statusBase,
    status: ChangeRequestStatusValueSchema.describe('open, merged or closed (SPEC §3.1).'),
    headCommitSha: z.string().nullable().default(null).describe('Head tip (at merge time once merged).'),
    baseCommitSha: z.string().nullable().default(null).describe('Base tip (before the merge once merged).'),
    mergedAt: timestamp().nullable().default(null).describe('When merge ran.'),
    mergedBy: z.string().nullable().default(null).describe('Who merged.'),
    mergeCommitSha: z.string().nullable().default(null).describe('Merge commit, or the fast-forward target.'),
    closedAt: timestamp().nullable().default(null).describe('When closed without merging.'),
    closedBy: z.string().nullable().default(null).describe('Who closed it.'),
    requestedChanges: z.array(RequestedChangeSchema).default([]).describe('Log of change-request notes.'),
    mergeClaim: MergeClaimSchema.nullable().optional().describe('Set while a merge runs; resolved by an ancestor check when its holder died.'),
    updatedAt: timestamp().optional().describe('Updated on every status change or SHA refresh.'),
    feedback: z.array(FeedbackDeliverySchema).optional().describe('Delivery of each requested change to the originating session; written by the ChangeRequest controller.'),
  })
  .describe('State of a change request: the API writes its state machine (docs/resources.md), the ChangeRequest controller settles merge claims and delivers feedback.');
export type ChangeRequestStatus = z.infer<typeof ChangeRequestStatusSchema>;
/** What a writer must give (fields with defaults optional). */
export type ChangeRequestStatusInput = z.input<typeof ChangeRequestStatusSchema>;

export type ChangeRequest = Resource<ChangeRequestSpec, ChangeRequestStatus>;

/** Change requests by the session that opened them (`<namespace>/<session>`): a Session's event finds its own in one read. */
export const CHANGE_REQUESTS_BY_ORIGIN_INDEX: ObjectIndex<ChangeRequest> = {
  name: 'change-requests-by-origin',
  keys: (cr) => [cr.spec.originSessionId ? `${cr.metadata.namespace ?? ''}/${cr.spec.originSessionId}` : undefined],
};
