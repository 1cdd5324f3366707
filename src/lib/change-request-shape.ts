// A change request as the REST API serializes it (SPEC §2.2, snake_case). The API writes this
// shape and the CLI reads it, so it lives here, where both may import it.

export interface SerializedChangeRequest {
  cr_id: string;
  account_id: string | null;
  project_id: string;
  number: number;
  title: string;
  description: string;
  base_ref: string;
  head_ref: string;
  status: 'open' | 'merged' | 'closed';
  head_commit_sha: string | null;
  base_commit_sha: string | null;
  origin_session_id: string | null;
  created_by: string;
  merged_at: string | null;
  merged_by: string | null;
  merge_commit_sha: string | null;
  closed_at: string | null;
  closed_by: string | null;
  metadata: { requested_changes: { text: string; by: string; at: string }[] };
  created_at: string | null;
  updated_at: string | null;
}
