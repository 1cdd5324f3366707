import { describe, expect, it } from 'vitest';
import { podPhase, podStatus, terminatedFromExit, type ContainerView } from './status.js';

const now = '2026-01-01T00:00:00Z';
const c = (state: ContainerView['state'], extra: Partial<ContainerView> = {}): ContainerView => ({ name: 'main', image: 'i', state, restartCount: 0, ready: false, ...extra });
const exit = (code: number) => terminatedFromExit(code, null, now, now, 'id');

describe('podPhase', () => {
  it.each([
    ['waiting, never ran', [c({ waiting: { reason: 'ContainerCreating' } })], 'Always', 'Pending'],
    ['crash-looping', [c({ waiting: { reason: 'CrashLoopBackOff' } }, { lastTerminated: exit(1) })], 'Always', 'Running'],
    ['running', [c({ running: { startedAt: now } })], 'Always', 'Running'],
    ['exited 0, Never', [c({ terminated: exit(0) })], 'Never', 'Succeeded'],
    ['exited 1, Never', [c({ terminated: exit(1) })], 'Never', 'Failed'],
    ['exited 0, OnFailure', [c({ terminated: exit(0) })], 'OnFailure', 'Succeeded'],
  ] as const)('%s → %s', (_what, containers, policy, phase) => {
    expect(podPhase([...containers], policy)).toBe(phase);
  });
});

describe('podStatus', () => {
  it('is Ready only when running and every container is ready; transition times stay while unchanged', () => {
    const notReady = podStatus({ hostIP: '127.0.0.1', podIP: '127.0.0.2', startTime: now, containers: [c({ running: { startedAt: now } })], now });
    const conditions = notReady.conditions as { type: string; status: string; lastTransitionTime: string; message?: string }[];
    expect(conditions.find((x) => x.type === 'Ready')).toMatchObject({ status: 'False', message: 'containers with unready status: [main]' });
    const later = '2026-01-01T00:01:00Z';
    const ready = podStatus({ hostIP: '127.0.0.1', podIP: '127.0.0.2', startTime: now, containers: [c({ running: { startedAt: now } }, { ready: true })], previousConditions: conditions as never, now: later });
    const after = ready.conditions as typeof conditions;
    expect(after.find((x) => x.type === 'Ready')).toMatchObject({ status: 'True', lastTransitionTime: later });
    expect(after.find((x) => x.type === 'PodScheduled')!.lastTransitionTime).toBe(now);
    expect(ready).toMatchObject({ phase: 'Running', podIP: '127.0.0.2', podIPs: [{ ip: '127.0.0.2' }] });
  });

  it('maps a signal to 128+n and a non-zero exit to Error', () => {
    expect(terminatedFromExit(null, 'SIGKILL', now, now, 'id')).toMatchObject({ exitCode: 137, signal: 9, reason: 'Error' });
    expect(terminatedFromExit(0, null, now, now, 'id').reason).toBe('Completed');
  });
});
