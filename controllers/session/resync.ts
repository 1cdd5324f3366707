// When the Session controller looks again without being told (pure). It is told a lot: its
// Sandbox's every change (status, the daemon's state events) wakes it. What no event says is the
// clock: a quiet session turns idle at a moment nobody announces, so a running session looks
// again at that moment, or after the safety-net interval if sooner.
import type { SessionStatusValue } from '../../src/resources/index.js';
import { DEFAULT_SANDBOX_RESYNC, engineBusy, type DaemonHealth, type SandboxResync } from '../../src/sandbox/index.js';

/** Never sooner than this (a clock a little off must not make a loop). */
const MIN_REQUEUE_MS = 1_000;

/**
 * When a session whose engine is ready and not busy becomes idle (ms since the epoch): the later
 * of the daemon's last activity and its start, plus the timeout; null when it cannot be idle now.
 */
export function idleDeadlineMs(health: DaemonHealth | null, idleTimeoutMs: number): number | null {
  if (!health || health.engine.state !== 'ready' || engineBusy(health)) return null;
  const marks = [health.last_activity_at, health.daemon.started_at].filter((t): t is string => !!t).map((t) => Date.parse(t));
  return marks.length ? Math.max(...marks) + idleTimeoutMs : null;
}

export interface RequeueInput {
  health: DaemonHealth | null;
  idleTimeoutMs: number;
  now: Date;
  resync?: SandboxResync;
}

/** How soon to look again: the safety net while starting; while running, by the idle deadline at the latest. */
export function sessionRequeueAfterMs(status: SessionStatusValue | undefined, input: RequeueInput): number | undefined {
  const resync = input.resync ?? DEFAULT_SANDBOX_RESYNC;
  if (status === 'provisioning') return resync.provisioningMs;
  if (status !== 'running') return undefined;
  const deadline = idleDeadlineMs(input.health, input.idleTimeoutMs);
  if (deadline === null) return resync.runningMs;
  return Math.max(MIN_REQUEUE_MS, Math.min(resync.runningMs, deadline - input.now.getTime()));
}
