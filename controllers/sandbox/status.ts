// Pure code of the Sandbox controller: the SPEC §3.3 state, the status and its conditions, and
// the Events of a transition, from what the provider and the daemon's health showed. No I/O.
//   provisioning  the process/Pod is starting, or svc-agent is cloning or booting the engine
//   active        the daemon answers and its engine is ready
//   stopped       desiredState stopped and the sandbox is gone
//   error         the sandbox cannot run: launch refused, daemon or engine failed (reason says why)
//   archived      its Session was deleted (written while the finalizer cleans up)
import { kubeTime, setCondition, type Condition, type Sandbox, type SandboxState, type SandboxStatus } from '../../src/resources/index.js';
import { DEFAULT_SANDBOX_RESYNC, type DaemonHealth, type SandboxObservation, type SandboxResync } from '../../src/sandbox/index.js';
import { startStepReason } from '../../src/lib/start-retry.js';

export interface SandboxEvent { type: 'Normal' | 'Warning'; reason: string; message: string }

/** What one reconcile saw and did. */
export interface SandboxObserved {
  /** The provider's view after ensure/observe/delete. */
  provider: SandboxObservation;
  /** GET /svc/health at provider.address; null when it did not answer (or no address). */
  health: DaemonHealth | null;
  /** What the reconcile did to the provider. */
  action: 'started' | 'restarted' | 'deleted' | null;
  /** Why the sandbox could not be started (e.g. its Session's Secret is missing). */
  launchError?: { reason: string; message: string };
}

export interface SandboxOutcome {
  status: SandboxStatus;
  events: SandboxEvent[];
}

/** The state and its reason/message for what was observed. */
function classify(sandbox: Sandbox, seen: SandboxObserved): { state: SandboxState; reason?: string; message: string } {
  const previous = sandbox.status?.state;
  if (sandbox.spec.desiredState === 'stopped') {
    if (seen.provider.state !== 'absent') return { state: previous ?? 'provisioning', message: 'stopping the sandbox' };
    // A sandbox that failed keeps saying why after its process is gone.
    if (previous === 'error') return { state: 'error', reason: sandbox.status?.reason, message: 'the sandbox failed and was stopped' };
    return { state: 'stopped', reason: 'Stopped', message: 'the sandbox was stopped; its branch is kept' };
  }
  if (seen.launchError) return { state: 'error', ...seen.launchError };
  if (seen.provider.state === 'failed') {
    return { state: 'error', reason: seen.provider.reason ?? 'ProviderFailed', message: seen.provider.message ?? 'the sandbox failed to start' };
  }
  const h = seen.health;
  if (h?.daemon.state === 'failed') {
    const reason = h.daemon.failed_step ? startStepReason(h.daemon.failed_step) : 'DaemonFailed';
    return { state: 'error', reason, message: `svc-agent failed: ${h.daemon.error ?? 'unknown error'}` };
  }
  if (h?.engine.state === 'failed') {
    return { state: 'error', reason: 'EngineFailed', message: `the engine could not start: ${h.engine.last_error ?? 'unknown error'}` };
  }
  if (h?.daemon.state === 'ready' && h.engine.state === 'ready') return { state: 'active', message: 'svc-agent and its engine are ready' };
  const retry = h?.daemon.retry ? ` (its ${h.daemon.retry.step} failed ${h.daemon.retry.attempt} time(s): ${h.daemon.retry.cause}; trying again)` : '';
  const phase = !h ? 'waiting for svc-agent to answer' : h.daemon.state !== 'ready' ? `svc-agent is ${h.daemon.state}${retry}` : `the engine is ${h.engine.state}`;
  return { state: 'provisioning', message: phase };
}

/** The later of a recorded time and one the daemon reported (untrusted: not a time is ignored). */
function later(a: string | undefined, b: string | null | undefined): string | undefined {
  if (!b || Number.isNaN(Date.parse(b))) return a;
  if (!a) return kubeTime(new Date(b));
  return Date.parse(b) > Date.parse(a) ? kubeTime(new Date(b)) : a;
}

export function nextSandboxStatus(sandbox: Sandbox, seen: SandboxObserved, now: Date): SandboxOutcome {
  const previous = sandbox.status ?? {};
  const generation = sandbox.metadata.generation;
  const { state, reason, message } = classify(sandbox, seen);
  let conditions: Condition[] = previous.conditions ?? [];
  const ready = state === 'active';
  conditions = setCondition(conditions, {
    type: 'Ready',
    status: ready ? 'True' : 'False',
    reason: ready ? 'Active' : reason ?? (state === 'provisioning' ? 'Provisioning' : state[0]!.toUpperCase() + state.slice(1)),
    message,
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
  }, now);
  const status: SandboxStatus = {
    ...previous,
    state,
    conditions,
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
  };
  status.address = seen.provider.state === 'absent' ? undefined : seen.provider.address ?? previous.address;
  if (seen.provider.detail?.podName) status.podName = seen.provider.detail.podName;
  status.lastActivityTime = later(previous.lastActivityTime, seen.health?.last_activity_at ?? null);
  if (seen.health) status.engineRestarts = seen.health.engine.restarts;
  status.reason = state === 'error' || state === 'stopped' ? reason : undefined;
  if (status.address === undefined) delete status.address;
  if (status.reason === undefined) delete status.reason;
  if (status.lastActivityTime === undefined) delete status.lastActivityTime;
  return { status, events: sandboxEvents(previous.state, state, seen, message) };
}

function sandboxEvents(before: SandboxState | undefined, after: SandboxState, seen: SandboxObserved, message: string): SandboxEvent[] {
  const events: SandboxEvent[] = [];
  if (seen.action === 'started') events.push({ type: 'Normal', reason: 'Started', message: `started the sandbox${seen.provider.detail?.pid ? ` (pid ${seen.provider.detail.pid})` : ''}` });
  if (seen.action === 'restarted') {
    events.push({ type: 'Warning', reason: 'Restarted', message: `the sandbox was gone (${seen.provider.reason ?? 'not found'}); started it again on the same branch` });
  }
  if (before === after) return events;
  if (after === 'active') events.push({ type: 'Normal', reason: 'Active', message });
  if (after === 'error') events.push({ type: 'Warning', reason: 'Failed', message });
  if (after === 'stopped') events.push({ type: 'Normal', reason: 'Stopped', message });
  return events;
}

/** Status of a Sandbox whose Session is gone: its process is removed, it is archived. */
export function archivedStatus(sandbox: Sandbox, now: Date): SandboxStatus {
  const conditions = setCondition(sandbox.status?.conditions, { type: 'Ready', status: 'False', reason: 'Archived', message: 'its session was deleted' }, now);
  return { ...sandbox.status, state: 'archived', conditions, reason: 'SessionDeleted' };
}

/** How soon to look again without being told (the daemon's state events wake it before). */
export function requeueAfterMs(state: SandboxState | undefined, resync: SandboxResync = DEFAULT_SANDBOX_RESYNC): number | undefined {
  if (state === 'provisioning') return resync.provisioningMs;
  if (state === 'active') return resync.runningMs;
  return undefined;
}
