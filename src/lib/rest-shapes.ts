// Resources as the REST API serializes them (snake_case). The API writes these shapes and the
// CLI reads them, so they live here, where both may import them.
import type { BootPhaseView } from './boot-phases.js';

/** A trigger entry as listed with its project (normalized, snake_case, plus runtime state). */
export type SerializedTrigger = Record<string, unknown> & { slug: string };

export interface SerializedProject {
  id: string;
  name: string;
  namespace: string;
  repo_url: string;
  default_branch: string;
  description: string | null;
  /** The Secret in the project's namespace holding its git credentials (spec.gitCredentialsSecretRef), or null. */
  credentials_secret: string | null;
  default_branch_sha: string | null;
  manifest: { file: string | null; version: number | null; valid: boolean; issues: { path: string; message: string }[] } | null;
  triggers: SerializedTrigger[];
  trigger_errors: { index: number; slug?: string; messages: string[] }[];
  conditions: { type: string; status: string; reason: string; message: string; observedGeneration?: number; lastTransitionTime?: string }[];
  created_at: string | null;
}

/** A change request (SPEC §2.2). */
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

// Git results as the change-request routes send them (computed by src/git, which re-exports them).

export type FileStatus = 'added' | 'modified' | 'deleted';

export interface DiffFile {
  path: string;
  status: FileStatus;
  additions: number;
  deletions: number;
  /** True for binary files; their additions and deletions are 0. */
  binary: boolean;
  /** True when the file's part of the patch was cut at a diff limit (docs/change-requests.md, Diff limits). */
  truncated: boolean;
}

/** SPEC §4.1 diff. */
export interface DiffResult {
  base_sha: string;
  head_sha: string;
  /** The commit the diff starts from in three-dot mode; null for unrelated histories (diff from the empty tree) and in two-dot mode. */
  merge_base: string | null;
  /** The unified patch, cut at the diff limits (empty when it was streamed elsewhere). */
  patch: string;
  files: DiffFile[];
  additions: number;
  deletions: number;
  /** True when any file's part of the patch was cut (those files have `truncated: true`), or files were omitted. */
  truncated: boolean;
  /** Files past the first 3,000 (MAX_DIFF_FILES): counted in additions and deletions, not listed. Absent when none. */
  files_omitted?: number;
}

/** SPEC §4.1 merge preview. */
export interface MergePreview {
  base_sha: string;
  head_sha: string;
  merge_base: string | null;
  is_up_to_date: boolean;
  can_merge: boolean;
  can_fast_forward: boolean;
  /** The conflicting paths: the first 3,000 (MAX_LISTED_CONFLICTS). */
  conflicts: string[];
  /** Conflicting paths past the first 3,000: counted, not listed. Absent when none. */
  conflicts_omitted?: number;
}

/**
 * `GET .../merge-preview`: SPEC §4.1's preview (what git says) plus what the merge gate will say
 * of the head: `manifest_issues`, present only when the head's manifest is invalid (the gate
 * will refuse the merge), so no one is told "can fast-forward" for a merge that answers 422.
 */
export interface ChangeRequestPreview extends MergePreview {
  manifest_issues?: { path: string; message: string }[];
}

export interface MergeResult {
  merge_commit_sha: string;
  base_commit_sha: string;
  head_commit_sha: string;
  fast_forward: boolean;
}

/** A token as `GET /v1/tokens` and `svc tokens ls --json` show it: never its value (docs/tokens.md). */
export interface SerializedToken {
  name: string;
  user_id: string;
  access: 'read' | 'write';
  project_id: string | null;
  capabilities: string[];
  expires_at: string | null;
  expired: boolean;
  created_at: string | null;
  created_by: string | null;
  last_used_at: string | null;
}

/** A session (issue 10, DESIGN §4 "Interfaces pinned"). */
export interface SerializedSession {
  id: string;
  project_id: string;
  status: string;
  desired_state: 'running' | 'stopped';
  agent: string;
  model: string | null;
  base_ref: string;
  base_sha: string | null;
  branch: string | null;
  trigger: string | null;
  created_by: string | null;
  created_at: string | null;
  last_activity_at: string | null;
  reason: string | null;
  /** Why it is in its status, in words (the Ready condition's message: a failed engine's last error, a push's git error). */
  message: string | null;
  /** While its engine cannot reach the model: `cannot reach the model: <error> (attempt N)` (ModelReachable False); else null. */
  model_error: string | null;
  /** While its engine makes no progress (Progressing False: a stalled engine, a root session or initial prompt it has not taken): why; else null. */
  progress_error: string | null;
  initial_prompt: string | null;
  pending_prompts: number;
  sandbox_state: string | null;
  /** The latest checkpoint of its uncommitted work (DESIGN §8.3), kept after its sandbox is gone. */
  checkpoint: { sha: string; at: string } | null;
  /** When each phase of its latest start (the first, or the last wake) started and ended; `ended_at` null while it runs. */
  timeline: SerializedBootPhase[];
}

export type SerializedBootPhase = BootPhaseView;

/** The model gateway (DESIGN §8.2, docs/gateway.md). A provider as listed: never its key. */
export interface GatewayProviderView {
  name: string;
  protocol: 'openai' | 'anthropic';
  base_url: string;
  updated_at: string | null;
}

export interface GatewayUsageTotals { requests: number; input_tokens: number; output_tokens: number }

/** GET .../gateway/usage: `key` is a session id, a trigger slug, a model, or a UTC day (null: none, e.g. an interactive session's trigger). */
export interface GatewayUsage {
  total: GatewayUsageTotals;
  groups: (GatewayUsageTotals & { key: string | null })[];
}

/** One relayed request (GET .../gateway/logs): never prompt or completion text. */
export interface GatewayLogEntry {
  at: string;
  session_id: string | null;
  trigger: string | null;
  provider: string;
  model: string | null;
  status: number;
  input_tokens: number;
  output_tokens: number;
  duration_ms: number;
}

export interface GatewayBudgetView {
  budget: { period: 'day' | 'month' | 'total'; max_tokens: number | null; max_tokens_per_session: number | null };
  used: { period_tokens: number };
}
