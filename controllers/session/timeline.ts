// The boot timeline of a start (issue 24 §2), pure: when each phase of the session's latest start
// (its first, or its last wake) started and ended, so that a slow start explains itself. The
// controller's half comes from the steps it timed (branch, credentials) and from when it asked for
// the sandbox; the sandbox's half from the daemon's health (its start, `boot`, the initial prompt).
// Each phase is written once: a later look (a restarted sandbox's daemon included) only ends a
// phase that has not ended.
import { BOOT_PHASES, type BootPhase, type BootPhaseName } from '../../src/resources/index.js';
import type { DaemonHealth } from '../../src/sandbox/index.js';
import type { SessionStep } from './decide.js';

/** When each step of this reconcile ran (the controller times them as it performs them). */
export type StepTimes = Partial<Record<SessionStep['kind'], { startedAt: string; endedAt: string }>>;

export interface TimelineFacts {
  /** A new start: a wake begins now, so the last start's phases go. */
  restart: boolean;
  stepTimes: StepTimes;
  /** The branch push failed and is tried again later: its phase goes on. */
  branchWaiting?: boolean;
  /** The decision asks for the sandbox to run now (created, or woken). */
  sandboxRequested: boolean;
  health: DaemonHealth | null;
  /** Prompts this reconcile delivered to the root engine session (null: none tried). */
  delivered: number | null;
}

const at = (value: string | null | undefined): number => (value ? Date.parse(value) : Number.NaN);

export function nextTimeline(before: readonly BootPhase[] | undefined, facts: TimelineFacts, now: Date): BootPhase[] | undefined {
  const phases = new Map<BootPhaseName, BootPhase>((facts.restart ? [] : before ?? []).map((p) => [p.phase, { ...p }]));
  /** Starts a phase not started yet; ends a started one that has not ended. */
  const record = (phase: BootPhaseName, startedAt: string | null | undefined, endedAt?: string | null) => {
    let entry = phases.get(phase);
    if (!entry && startedAt) phases.set(phase, entry = { phase, startedAt });
    if (entry && !entry.endedAt && endedAt) entry.endedAt = endedAt;
  };

  const { stepTimes: steps, health } = facts;
  if (steps['push-branch']) record('branch', steps['push-branch'].startedAt, facts.branchWaiting ? null : steps['push-branch'].endedAt);
  const secret = steps['write-session-secret'];
  const cli = steps['write-cli-token'];
  if (secret || cli) record('credentials', (secret ?? cli)!.startedAt, (cli ?? secret)!.endedAt);
  if (facts.sandboxRequested) record('sandbox', now.toISOString());

  const started = health?.daemon.started_at;
  if (health && started) {
    const boot = health.boot ?? {};
    record('sandbox', null, started); // scheduled until its daemon runs
    record('daemon', started, boot.listening_at);
    record('clone', boot.clone_started_at, boot.clone_ended_at);
    record('restore', boot.restore_started_at, boot.restore_ended_at);
    record('engine', boot.engine_started_at, boot.engine_ready_at);
    // the first prompt: the initial one (the daemon sends it once its engine is ready), else the
    // first the controller delivered (a wake's); a marker of an earlier boot does not count
    const ready = boot.engine_ready_at;
    const initial = health.engine.initial_prompt_sent_at;
    const delivery = facts.delivered ? steps['deliver-prompts']?.endedAt : undefined;
    const sent = initial && at(initial) >= at(ready) ? initial : delivery;
    if (ready && sent) record('prompt', ready, sent);
  }
  const timeline = BOOT_PHASES.flatMap((phase) => phases.get(phase) ?? []);
  return timeline.length ? timeline : undefined;
}
