import { describe, expect, it } from 'vitest';
import { getCondition, type Sandbox, type SandboxState } from '../../src/resources/index.js';
import type { DaemonHealth } from '../../src/sandbox/index.js';
import { archivedStatus, nextSandboxStatus, requeueAfterMs, type SandboxObserved } from './status.js';

const NOW = new Date('2026-11-23T12:00:00Z');

function sandbox(desiredState: 'running' | 'stopped' = 'running', state?: SandboxState, reason?: string): Sandbox {
  return {
    apiVersion: 'svc.dev/v1alpha1', kind: 'Sandbox',
    metadata: { name: 's1', namespace: 'default', uid: 'u1', generation: 3 },
    spec: { sessionRef: { name: 's1' }, provider: 'process', template: {}, env: [], desiredState },
    status: state ? { state, ...(reason ? { reason } : {}) } : undefined,
  };
}

function health(daemon: string, engine: string, extra: Partial<DaemonHealth['engine']> = {}): DaemonHealth {
  return {
    status: 'starting',
    daemon: { state: daemon as DaemonHealth['daemon']['state'], error: daemon === 'failed' ? 'clone failed: repository not found' : null },
    engine: { state: engine as DaemonHealth['engine']['state'], restarts: 2, last_error: engine === 'failed' ? 'exited with code 1 five times' : null, root_session_id: null, initial_prompt_sent_at: null, run: null, ...extra },
    last_activity_at: '2026-11-23T11:59:00.000Z',
  };
}

/** A daemon whose start gave up at `step` (health's daemon.failed_step). */
function failedAt(step: string): DaemonHealth {
  const h = health('failed', 'stopped');
  h.daemon.failed_step = step;
  return h;
}

const running = (h: DaemonHealth | null, action: SandboxObserved['action'] = null): SandboxObserved => ({
  provider: { state: 'running', address: '127.0.0.1:4000', detail: { pid: 42 } }, health: h, action,
});

describe('Sandbox status (SPEC §3.3)', () => {
  it.each([
    ['process started, daemon not answering', sandbox(), running(null, 'started'), 'provisioning', undefined, ['Started']],
    ['cloning', sandbox('running', 'provisioning'), running(health('cloning', 'stopped')), 'provisioning', undefined, []],
    ['engine booting', sandbox('running', 'provisioning'), running(health('ready', 'booting')), 'provisioning', undefined, []],
    ['engine ready', sandbox('running', 'provisioning'), running(health('ready', 'ready')), 'active', undefined, ['Active']],
    ['engine failed', sandbox('running', 'provisioning'), running(health('ready', 'failed')), 'error', 'EngineFailed', ['Failed']],
    ['daemon failed (no step named: an older daemon)', sandbox('running', 'provisioning'), running(health('failed', 'stopped')), 'error', 'DaemonFailed', ['Failed']],
    ['the clone gave up', sandbox('running', 'provisioning'), running(failedAt('clone')), 'error', 'CloneFailed', ['Failed']],
    ['the checkpoint fetch gave up', sandbox('running', 'provisioning'), running(failedAt('checkpoint fetch')), 'error', 'CheckpointFetchFailed', ['Failed']],
    ['launch refused', sandbox(), { provider: { state: 'absent' }, health: null, action: null, launchError: { reason: 'SessionSecretMissing', message: 'no secret' } }, 'error', 'SessionSecretMissing', ['Failed']],
    ['provider failed', sandbox(), { provider: { state: 'failed', reason: 'ImagePullBackOff', message: 'no image' }, health: null, action: null }, 'error', 'ImagePullBackOff', ['Failed']],
    ['stopped and gone', sandbox('stopped', 'active'), { provider: { state: 'absent' }, health: null, action: 'deleted' }, 'stopped', 'Stopped', ['Stopped']],
    // a Pod's deletion asked for: it runs its grace (the stop checkpoint); stopped once gone (the row above)
    ['stopped, its Pod still in its grace', sandbox('stopped', 'active'), { provider: { state: 'failed', reason: 'PodDeleted', message: 'the pod is being deleted' }, health: null, action: 'deleted' }, 'active', undefined, []],
    ['failed, then stopped: keeps its reason', sandbox('stopped', 'error', 'EngineFailed'), { provider: { state: 'absent' }, health: null, action: 'deleted' }, 'error', 'EngineFailed', []],
    ['died and restarted', sandbox('running', 'active'), { ...running(null, 'restarted'), provider: { state: 'provisioning', address: '127.0.0.1:4001', reason: 'Exited' } }, 'provisioning', undefined, ['Restarted']],
  ] as const)('%s', (_name, sb, seen, state, reason, events) => {
    const { status, events: out } = nextSandboxStatus(sb, seen as SandboxObserved, NOW);
    expect(status.state).toBe(state);
    expect(status.reason).toBe(reason);
    expect(status.observedGeneration).toBe(3);
    const ready = getCondition(status.conditions, 'Ready')!;
    expect(ready.status).toBe(state === 'active' ? 'True' : 'False');
    expect(ready.observedGeneration).toBe(3);
    expect(out.map((e) => e.reason)).toEqual(events);
  });

  it('a start waiting out a transient failure stays provisioning and says why', () => {
    const retrying = health('cloning', 'stopped');
    retrying.daemon.retry = { step: 'clone', attempt: 3, cause: 'the API is starting (503)', error: 'The requested URL returned error: 503', next_attempt_at: '2026-11-23T12:00:02Z' };
    const { status, events } = nextSandboxStatus(sandbox('running', 'provisioning'), running(retrying), NOW);
    expect(status.state).toBe('provisioning');
    expect(getCondition(status.conditions, 'Ready')?.message).toBe('svc-agent is cloning (its clone failed 3 time(s): the API is starting (503); trying again)');
    expect(events).toEqual([]);
  });

  it('records the address, the engine restarts and the latest activity', () => {
    const { status } = nextSandboxStatus(sandbox('running', 'provisioning'), running(health('ready', 'ready')), NOW);
    expect(status).toMatchObject({ address: '127.0.0.1:4000', engineRestarts: 2, lastActivityTime: '2026-11-23T11:59:00Z' });
    const older = nextSandboxStatus({ ...sandbox('running', 'active'), status: { ...status } }, running({ ...health('ready', 'ready'), last_activity_at: '2026-11-23T10:00:00Z' }), NOW);
    expect(older.status.lastActivityTime).toBe('2026-11-23T11:59:00Z');
    // what a sandbox reports is untrusted: not a time is ignored (it threw, and failed every reconcile)
    const forged = nextSandboxStatus({ ...sandbox('running', 'active'), status: { ...status } }, running({ ...health('ready', 'ready'), last_activity_at: 'not a date' }), NOW);
    expect(forged.status.lastActivityTime).toBe('2026-11-23T11:59:00Z');
    expect(nextSandboxStatus(sandbox('running', 'provisioning'), running({ ...health('ready', 'ready'), last_activity_at: 'soon' }), NOW).status.lastActivityTime).toBeUndefined();
  });

  it('an unchanged state writes no new Event', () => {
    const first = nextSandboxStatus(sandbox('running', 'provisioning'), running(health('ready', 'ready')), NOW);
    const again = nextSandboxStatus({ ...sandbox(), status: first.status }, running(health('ready', 'ready')), NOW);
    expect(again.events).toEqual([]);
  });

  it('archived when its session is deleted', () => {
    const status = archivedStatus(sandbox('running', 'active'), NOW);
    expect(status.state).toBe('archived');
    expect(getCondition(status.conditions, 'Ready')?.reason).toBe('Archived');
  });
});

describe('requeueAfterMs: the safety net under the daemon\'s state events', () => {
  it.each([
    ['provisioning', 'provisioning', 5_000],
    ['active', 'active', 60_000],
    ['stopped', 'stopped', undefined],
    ['error', 'error', undefined],
  ] as const)('%s', (_name, state, expected) => {
    expect(requeueAfterMs(state)).toBe(expected);
  });

  it('the operator\'s intervals when given', () => {
    expect(requeueAfterMs('provisioning', { provisioningMs: 1, runningMs: 2 })).toBe(1);
    expect(requeueAfterMs('active', { provisioningMs: 1, runningMs: 2 })).toBe(2);
  });
});
