// What the daemon's health says that the Session shows, pure: the latest checkpoint (kept in the
// status, so it outlives the sandbox), the conditions Progressing and ModelReachable with a Warning
// when they turn for an unreachable model or a failed turn, and the Events of one sandbox boot (its
// checkpoint restored or skipped, each engine stall), recorded per boot in status.daemonReports so
// that they are level-based: a second look, or a restarted operator, sees them reported already.
import { getCondition, isFalse, kubeTime, type ConditionInput, type SessionStatus } from '../../src/resources/index.js';
import type { DaemonHealth } from '../../src/sandbox/index.js';
import type { SessionEvent } from './decide.js';

export interface DaemonReports {
  checkpoint: SessionStatus['checkpoint'];
  daemonReports: SessionStatus['daemonReports'];
  conditions: ConditionInput[];
  events: SessionEvent[];
}

const short = (sha: string) => sha.slice(0, 12);

function condition(type: string, status: ConditionInput['status'], reason: string, message: string, generation?: number): ConditionInput {
  return { type, status, reason, message, ...(generation !== undefined ? { observedGeneration: generation } : {}) };
}

/** The latest checkpoint the daemon knows, else the one recorded before (a sandbox with checkpoints off knows none). */
function latestCheckpoint(before: SessionStatus, health: DaemonHealth): SessionStatus['checkpoint'] {
  const { sha, at } = health.checkpoint ?? {};
  if (!sha || !at || Number.isNaN(Date.parse(at))) return before.checkpoint;
  return { sha, at: kubeTime(new Date(at)) };
}

/**
 * The newer of the status's checkpoint and the one the git gateway saw pushed (the annotation):
 * a stop's checkpoint is pushed while the sandbox goes, after the last health read.
 */
export function withPushedCheckpoint(checkpoint: SessionStatus['checkpoint'], pushed: { sha: string; at: string } | null): SessionStatus['checkpoint'] {
  if (!pushed || pushed.sha === checkpoint?.sha) return checkpoint;
  if (checkpoint && Date.parse(checkpoint.at) >= Date.parse(pushed.at)) return checkpoint;
  return { sha: pushed.sha, at: kubeTime(new Date(pushed.at)) };
}

function engineConditions(health: DaemonHealth, generation?: number): ConditionInput[] {
  const conditions: ConditionInput[] = [];
  const progress = health.progress;
  const rootError = health.engine.root_session_error;
  if (progress?.state === 'stalled') {
    conditions.push(condition('Progressing', 'False', 'EngineStalled', `${progress.reason ?? 'the engine is stuck'}; svc-agent aborts its turn and restarts it`, generation));
  } else if (rootError) {
    const what = health.engine.root_session_id ? 'the initial prompt was not delivered' : 'the root session could not be opened';
    conditions.push(condition('Progressing', 'False', 'RootSessionFailed', `${what}: ${rootError}; svc-agent tries again`, generation));
  } else if (health.engine.turn_error) {
    conditions.push(condition('Progressing', 'False', 'TurnFailed', `the engine's last turn failed: ${health.engine.turn_error}; a new prompt starts another`, generation));
  } else if (progress) {
    conditions.push(condition('Progressing', 'True', 'EngineProgressing', 'the engine answers and its turns show progress', generation));
  }
  const modelError = health.engine.model_error;
  if (modelError) conditions.push(condition('ModelReachable', 'False', 'ModelUnreachable', modelError, generation));
  else if (health.engine.state === 'ready') conditions.push(condition('ModelReachable', 'True', 'NoModelError', 'the engine is ready and no model request of it is failing', generation));
  return conditions;
}

/** The Events of the boot health speaks for that `before` has not reported yet. */
function bootEvents(before: SessionStatus, health: DaemonHealth): Pick<DaemonReports, 'daemonReports' | 'events'> {
  const boot = health.daemon.started_at;
  if (!boot) return { daemonReports: before.daemonReports, events: [] };
  const known = before.daemonReports?.daemonStartedAt === boot ? before.daemonReports : { daemonStartedAt: boot, checkpoint: false, stalls: 0 };
  const reports = { ...known };
  const events: SessionEvent[] = [];
  // the restore is decided before the daemon is ready (it runs while the daemon is `restoring`)
  if (!known.checkpoint && health.checkpoint && health.daemon.state === 'ready') {
    const { restored, skipped } = health.checkpoint;
    if (restored) {
      events.push({ type: 'Normal', reason: 'CheckpointRestored', message: `restored checkpoint ${short(restored.sha)} (${restored.at}): the uncommitted work of the session's last sandbox is back on top of the branch` });
    }
    if (skipped) {
      events.push({ type: 'Warning', reason: 'CheckpointSkipped', message: `left checkpoint ${skipped.sha ? short(skipped.sha) : '(not fetched)'} alone: ${skipped.reason}` });
    }
    reports.checkpoint = true;
  }
  const stalls = health.progress?.stalls ?? 0;
  if (stalls > known.stalls) {
    const why = health.progress?.last_stall?.reason ?? health.progress?.reason ?? 'no progress';
    events.push({ type: 'Warning', reason: 'EngineStalled', message: `the engine was stuck (${why}); svc-agent aborted its turn and restarted it (stall ${stalls} of this sandbox)` });
    reports.stalls = stalls;
  }
  return { daemonReports: reports, events };
}

/** What `health` adds to the Session's status, given the status before. */
export function daemonReports(before: SessionStatus, health: DaemonHealth, generation?: number): DaemonReports {
  const conditions = engineConditions(health, generation);
  const boot = bootEvents(before, health);
  const unreachable = conditions.find((c) => c.type === 'ModelReachable' && c.status === 'False');
  const turnFailed = conditions.find((c) => c.type === 'Progressing' && c.reason === 'TurnFailed');
  const progressingBefore = getCondition(before.conditions, 'Progressing');
  const events = [
    ...boot.events,
    // once when the model becomes unreachable, not per retry (the condition's message follows the attempts)
    ...(unreachable && !isFalse(before.conditions, 'ModelReachable') ? [{ type: 'Warning' as const, reason: 'ModelUnreachable', message: unreachable.message }] : []),
    // once per failed turn, as far as a look can tell: not again while the condition says the same
    ...(turnFailed && (progressingBefore?.reason !== 'TurnFailed' || progressingBefore.message !== turnFailed.message) ? [{ type: 'Warning' as const, reason: 'TurnFailed', message: turnFailed.message }] : []),
  ];
  return { checkpoint: latestCheckpoint(before, health), daemonReports: boot.daemonReports, conditions, events };
}
