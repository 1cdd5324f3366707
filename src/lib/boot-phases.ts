// The phases of a session's start (its boot timeline, docs/sessions.md), in order: declared once
// here, where the Session resource, the REST shapes, the CLI and the dashboard may import it.
// `restore` only when a checkpoint could be restored (checkpoints on).
export const BOOT_PHASES = ['branch', 'credentials', 'sandbox', 'daemon', 'clone', 'restore', 'engine', 'prompt'] as const;
export type BootPhaseName = (typeof BOOT_PHASES)[number];

/** What each phase is, for people (`svc sessions show`, the dashboard). */
export const BOOT_PHASE_LABELS: Record<BootPhaseName, string> = {
  branch: 'branch pushed',
  credentials: 'credentials written',
  sandbox: 'sandbox scheduled',
  daemon: 'daemon up',
  clone: 'repository cloned',
  restore: 'checkpoint restore',
  engine: 'engine ready',
  prompt: 'first prompt sent',
};

/** A phase as REST shows it (SerializedSession's `timeline`). */
export interface BootPhaseView { phase: BootPhaseName; started_at: string; ended_at: string | null }

/** One phase to draw: when it started after the first phase did, and how long it took (null: still running). */
export interface BootPhaseRow { phase: BootPhaseName; offsetMs: number; durationMs: number | null }

/**
 * The rows of a timeline, when the start began (the earliest phase's start: the phases overlap,
 * the first listed need not be the first begun) and the whole start's duration once every phase
 * ended (null while one runs).
 */
export function bootTimelineRows(timeline: readonly BootPhaseView[]): { rows: BootPhaseRow[]; startedAt: string | null; totalMs: number | null } {
  if (!timeline.length) return { rows: [], startedAt: null, totalMs: null };
  const first = Math.min(...timeline.map((p) => Date.parse(p.started_at)));
  // the controller's and the sandbox's clocks may differ by a little on a cluster: never below zero
  const rows = timeline.map((p) => ({
    phase: p.phase,
    offsetMs: Math.max(0, Date.parse(p.started_at) - first),
    durationMs: p.ended_at === null ? null : Math.max(0, Date.parse(p.ended_at) - Date.parse(p.started_at)),
  }));
  const running = timeline.some((p) => p.ended_at === null);
  return { rows, startedAt: new Date(first).toISOString(), totalMs: running ? null : Math.max(0, Math.max(...timeline.map((p) => Date.parse(p.ended_at!))) - first) };
}

/** A duration for people: `120 ms`, `1.25 s`, `2 min 5 s`. */
export function formatDurationMs(ms: number): string {
  if (Math.round(ms) < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(2)} s`;
  const seconds = Math.round(ms / 1000);
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}
