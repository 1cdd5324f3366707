import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../resources/index.js';
import { observePod } from './observe.js';

const created = '2026-01-01T00:00:00Z';
const now = new Date('2026-01-01T00:01:00Z');
const pod = (status: Record<string, unknown>, meta: Record<string, unknown> = {}): KubeObject => ({ metadata: { name: 'svc-sandbox-x', creationTimestamp: created, ...meta }, status });
const observe = (p: KubeObject | undefined, extra: Partial<Parameters<typeof observePod>[0]> = {}) =>
  observePod({ pod: p, secretExists: true, now, provisioningDeadlineMs: 300_000, maxRestarts: 3, ...extra });
const container = (c: Record<string, unknown>) => ({ containerStatuses: [{ name: 'sandbox', restartCount: 0, ...c }] });

describe('observePod', () => {
  it.each([
    ['Pending, unscheduled', { phase: 'Pending' }, 'provisioning', undefined],
    ['Pending, creating', { phase: 'Pending', ...container({ state: { waiting: { reason: 'ContainerCreating' } } }) }, 'provisioning', 'ContainerCreating'],
    ['Running with an IP', { phase: 'Running', podIP: '10.0.0.5', ...container({ state: { running: {} } }) }, 'running', undefined],
    ['image pull error', { phase: 'Pending', ...container({ state: { waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "x"' } } }) }, 'failed', 'ImagePullBackOff'],
    ['ErrImagePull', { phase: 'Pending', ...container({ state: { waiting: { reason: 'ErrImagePull', message: 'not found' } } }) }, 'failed', 'ErrImagePull'],
    ['crash loop', { phase: 'Running', ...container({ restartCount: 1, state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: { terminated: { exitCode: 2, reason: 'Error' } } }) }, 'failed', 'CrashLoopBackOff'],
    ['OOMKilled', { phase: 'Running', podIP: '10.0.0.5', ...container({ restartCount: 1, state: { running: {} }, lastState: { terminated: { exitCode: 137, reason: 'OOMKilled' } } }) }, 'failed', 'OOMKilled'],
    ['evicted', { phase: 'Failed', reason: 'Evicted', message: 'Pod ephemeral local storage usage exceeds the total limit of containers 10Gi.' }, 'failed', 'Evicted'],
    ['too many restarts', { phase: 'Running', podIP: '10.0.0.5', ...container({ restartCount: 4, state: { running: {} }, lastState: { terminated: { exitCode: 1, reason: 'Error' } } }) }, 'failed', 'TooManyRestarts'],
    ['one restart, running again', { phase: 'Running', podIP: '10.0.0.5', ...container({ restartCount: 1, state: { running: {} }, lastState: { terminated: { exitCode: 1, reason: 'Error' } } }) }, 'running', undefined],
  ] as const)('%s → %s', (_what, status, state, reason) => {
    const o = observe(pod(status));
    expect(o.state).toBe(state);
    expect(o.reason).toBe(reason);
    expect(o.detail).toEqual({ podName: 'svc-sandbox-x' });
  });

  it('gives the daemon address pod IP:8000 and the pod reason in the message', () => {
    expect(observe(pod({ phase: 'Running', podIP: '10.0.0.5', ...container({ state: { running: {} } }) })).address).toBe('10.0.0.5:8000');
    expect(observe(pod({ phase: 'Failed', reason: 'Evicted', message: 'The node was low on resource: memory.' })).message).toBe('pod svc-sandbox-x: The node was low on resource: memory.');
    const crash = observe(pod({ phase: 'Running', ...container({ state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: { terminated: { exitCode: 2, reason: 'Error', message: 'missing required environment' } } }) }));
    expect(crash.message).toBe('pod svc-sandbox-x: the sandbox keeps exiting: Error (exit code 2): missing required environment');
  });

  it('a pod deleted from under us is a failure; nothing at all is absent', () => {
    expect(observe(undefined)).toMatchObject({ state: 'failed', reason: 'PodDeleted' });
    expect(observe(undefined, { secretExists: false })).toEqual({ state: 'absent' });
    expect(observe(pod({ phase: 'Running' }, { deletionTimestamp: created }))).toMatchObject({ state: 'failed', reason: 'PodDeleted' });
  });

  it('fails a pod still not running after the provisioning deadline, saying why', () => {
    const stuck = pod({ phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/3 nodes are available: 3 Insufficient cpu.' }] });
    expect(observe(stuck).state).toBe('provisioning');
    const late = observe(stuck, { now: new Date('2026-01-01T00:05:01Z') });
    expect(late).toMatchObject({ state: 'failed', reason: 'ProvisioningTimeout', message: 'pod svc-sandbox-x: not running after 5m: 0/3 nodes are available: 3 Insufficient cpu.' });
  });
});
