// A ChangeRequest resource as the REST API shows it: every field of SPEC §2.2, snake_case.
import type { ChangeRequest } from '../../resources/index.js';
import type { SerializedChangeRequest } from '../../lib/rest-shapes.js';

export type { SerializedChangeRequest };

export interface Owner {
  /** The namespace's uid (account); null when the namespace could not be read. */
  accountId: string | null;
  projectId: string;
}

/** Kubernetes timestamps are RFC 3339 already; normalized to JavaScript's ISO 8601 form. */
function iso(value: string | null | undefined): string | null {
  if (!value) return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? value : date.toISOString();
}

export function serializeChangeRequest(cr: ChangeRequest, owner: Owner): SerializedChangeRequest {
  const s = cr.status;
  const created = iso(cr.metadata.creationTimestamp);
  return {
    cr_id: cr.metadata.uid ?? '',
    account_id: owner.accountId,
    project_id: owner.projectId,
    number: cr.spec.number,
    title: cr.spec.title,
    description: cr.spec.description ?? '',
    base_ref: cr.spec.baseRef,
    head_ref: cr.spec.headRef,
    status: s?.status ?? 'open',
    head_commit_sha: s?.headCommitSha ?? null,
    base_commit_sha: s?.baseCommitSha ?? null,
    origin_session_id: cr.spec.originSessionId ?? null,
    created_by: cr.spec.createdBy,
    merged_at: iso(s?.mergedAt),
    merged_by: s?.mergedBy ?? null,
    merge_commit_sha: s?.mergeCommitSha ?? null,
    closed_at: iso(s?.closedAt),
    closed_by: s?.closedBy ?? null,
    metadata: { requested_changes: (s?.requestedChanges ?? []).map((r) => ({ ...r, at: iso(r.at) ?? r.at })) },
    created_at: created,
    updated_at: iso(s?.updatedAt) ?? created,
  };
}

/** Newest first: by number, which only grows. */
export function newestFirst(a: ChangeRequest, b: ChangeRequest): number {
  return b.spec.number - a.spec.number;
}
