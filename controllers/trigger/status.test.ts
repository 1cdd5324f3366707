import { describe, expect, it } from 'vitest';
import type { Session, Trigger, TriggerFire } from '../../src/resources/index.js';
import { nextTriggerStatus } from './status.js';

const NOW = new Date('2030-01-01T00:10:00Z');
const CREATED = '2030-01-01T00:00:00Z';

function trigger(spec: Partial<Trigger['spec']> = {}, status?: Trigger['status'], meta: Partial<Trigger['metadata']> = {}): Trigger {
  return {
    apiVersion: 'svc.dev/v1alpha1', kind: 'Trigger',
    metadata: { name: 'web-nightly', namespace: 'acct', uid: 't', generation: 1, creationTimestamp: CREATED, ...meta },
    spec: { slug: 'nightly', type: 'cron', prompt: 'p', name: 'nightly', agent: 'a', sessionMode: 'fresh', enabled: true, timezone: 'UTC', cron: '0 0 * * * *', projectRef: { name: 'web' }, ...spec },
    ...(status ? { status } : {}),
  };
}

function fire(name: string, firedAt: string, status?: TriggerFire['status']): TriggerFire {
  return { apiVersion: 'svc.dev/v1alpha1', kind: 'TriggerFire', metadata: { name, namespace: 'acct' }, spec: { triggerRef: { name: 'web-nightly' }, source: 'cron', firedAt, sessionName: `${name}-s` }, ...(status ? { status } : {}) };
}
const failed = (name: string, at: string) => fire(name, at, { phase: 'failed', reason: 'SessionRejected: no' });
const fired = (name: string, at: string) => fire(name, at, { phase: 'fired', sessionName: `${name}-s` });

function run(t: Trigger, fires: TriggerFire[] = [], sessions: Session[] = [], now = NOW) {
  return nextTriggerStatus({ trigger: t, fires, sessions: new Map(sessions.map((s) => [s.metadata.name!, s])), now });
}

describe('nextTriggerStatus', () => {
  it('a new cron trigger: next fire, schedule since its creation, Ready', () => {
    const { status, requeueAfterMs } = run(trigger());
    expect(status).toMatchObject({ nextFireAt: '2030-01-01T01:00:00.000Z', scheduleSince: CREATED, failuresSince: CREATED, consecutiveFailures: 0, paused: false, dormant: false, observedGeneration: 1 });
    expect(status.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'True', reason: 'Scheduled' });
    expect(requeueAfterMs).toBe(5 * 60_000);
  });

  it('a webhook trigger is Ready saying which project secret authenticates it (the API refuses every delivery while it is not set)', () => {
    const { status } = run(trigger({ type: 'webhook', cron: undefined, secretEnv: 'GH_WEBHOOK_SECRET' }));
    expect(status.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'True', reason: 'Listening', message: expect.stringContaining('signed with the project secret GH_WEBHOOK_SECRET, once it is set (409 until then') });
    expect(status.nextFireAt).toBeUndefined();
  });

  it('lastFiredAt is the latest fire instant; lastSessionName the latest fired session', () => {
    const { status } = run(trigger(), [fired('a', '2030-01-01T00:01:00.000Z'), failed('b', '2030-01-01T00:02:00.000Z'), fire('c', '2030-01-01T00:03:00.000Z', { phase: 'queued' })]);
    expect(status).toMatchObject({ lastFiredAt: '2030-01-01T00:03:00.000Z', lastSessionName: 'a-s', consecutiveFailures: 1 });
  });

  it('a schedule edit moves scheduleSince to now', () => {
    const before = run(trigger()).status;
    const { status } = run(trigger({ cron: '0 30 * * * *' }, before));
    expect(status.scheduleSince).toBe(NOW.toISOString());
  });

  it.each<[string, TriggerFire[], Session[], number, boolean]>([
    ['three failures in a row pause it', [failed('a', '2030-01-01T00:01:00.000Z'), failed('b', '2030-01-01T00:02:00.000Z'), failed('c', '2030-01-01T00:03:00.000Z')], [], 3, true],
    ['a success in between resets the count', [failed('a', '2030-01-01T00:01:00.000Z'), fired('b', '2030-01-01T00:02:00.000Z'), failed('c', '2030-01-01T00:03:00.000Z')], [], 1, false],
    ['a fired session that failed counts as a failure', [failed('a', '2030-01-01T00:01:00.000Z'), fired('b', '2030-01-01T00:02:00.000Z'), failed('c', '2030-01-01T00:03:00.000Z')], [{ apiVersion: 'svc.dev/v1alpha1', kind: 'Session', metadata: { name: 'b-s' }, spec: { projectRef: { name: 'web' }, agent: 'a', baseRef: 'main', desiredState: 'running' }, status: { status: 'failed' } }], 3, true],
    ['queued fires are skipped, not a success', [failed('a', '2030-01-01T00:01:00.000Z'), failed('b', '2030-01-01T00:02:00.000Z'), fire('q', '2030-01-01T00:02:30.000Z', { phase: 'queued' }), failed('c', '2030-01-01T00:03:00.000Z')], [], 3, true],
  ])('%s', (_name, fires, sessions, count, paused) => {
    const { status, events } = run(trigger(), fires, sessions);
    expect(status.consecutiveFailures).toBe(count);
    expect(status.paused).toBe(paused);
    if (paused) {
      expect(status.nextFireAt).toBeUndefined();
      expect(status.conditions?.find((c) => c.type === 'Paused')).toMatchObject({ status: 'True', reason: 'ConsecutiveFailures' });
      expect(status.conditions?.find((c) => c.type === 'Paused')?.message).toContain('svc triggers resume nightly');
      expect(events).toEqual([expect.objectContaining({ type: 'Warning', reason: 'Paused' })]);
    }
  });

  describe('the pause rule when fires and failures interleave (issue 23)', () => {
    const sess = (name: string, status: NonNullable<Session['status']>['status'], startedAt?: string): Session => ({
      apiVersion: 'svc.dev/v1alpha1', kind: 'Session', metadata: { name }, spec: { projectRef: { name: 'web' }, agent: 'a', baseRef: 'main', desiredState: 'running' },
      status: { status, ...(startedAt ? { startedAt } : {}) },
    });
    const at = (minute: number) => `2030-01-01T00:0${minute}:00.000Z`;
    it.each<[string, TriggerFire[], Session[], number, boolean]>([
      ['a later fire whose session is still starting does not erase earlier failures',
        [fired('a', at(1)), fired('b', at(2)), fired('c', at(3))], [sess('a-s', 'failed'), sess('b-s', 'failed'), sess('c-s', 'provisioning')], 2, false],
      ['the cron case: each session fails after the next fire started; the third failure pauses',
        [fired('a', at(1)), fired('b', at(2)), fired('c', at(3)), fired('d', at(4))], [sess('a-s', 'failed'), sess('b-s', 'failed'), sess('c-s', 'failed'), sess('d-s', 'provisioning')], 3, true],
      ['a session that ran is a success, even when a later one failed',
        [fired('a', at(1)), fired('b', at(2)), fired('c', at(3))], [sess('a-s', 'failed'), sess('b-s', 'running', at(2)), sess('c-s', 'failed')], 1, false],
      ['a stopped session is a success', [fired('a', at(1)), fired('b', at(2))], [sess('a-s', 'failed'), sess('b-s', 'stopped', at(2))], 0, false],
      ['a fire refused for capacity (QueueFull) neither counts nor resets',
        [failed('a', at(1)), fire('q', at(2), { phase: 'failed', reason: 'QueueFull: the queue of project web is full' }), failed('b', at(3)), failed('c', at(4))], [], 3, true],
      ['a reuse fire whose session had its waiting prompts full (PromptQueueFull) neither counts nor resets',
        [failed('a', at(1)), failed('b', at(2)), fire('p', at(3), { phase: 'failed', reason: 'PromptQueueFull: session s already has 3 prompt(s) waiting' })], [], 2, false],
      ['fires in the same second as the trigger\'s creation count (instants, not strings, are compared)',
        [failed('a', '2030-01-01T00:00:00.100Z'), failed('b', '2030-01-01T00:00:00.200Z'), failed('c', '2030-01-01T00:00:00.300Z')], [], 3, true],
      ['only capacity refusals: never paused',
        [1, 2, 3, 4].map((m) => fire(`q${m}`, at(m), { phase: 'failed', reason: 'QueueFull: full' })), [], 0, false],
    ])('%s', (_name, fires, sessions, count, paused) => {
      const { status } = run(trigger(), fires, sessions);
      expect(status.consecutiveFailures).toBe(count);
      expect(status.paused).toBe(paused);
    });
  });

  const threeFailures = [failed('a', '2030-01-01T00:01:00.000Z'), failed('b', '2030-01-01T00:02:00.000Z'), failed('c', '2030-01-01T00:03:00.000Z')];

  it('the resume annotation unpauses: earlier failures stop counting', () => {
    const paused = run(trigger(), threeFailures).status;
    const { status, events } = run(trigger({}, paused, { annotations: { 'svc.dev/resume': 'r1' } }), threeFailures);
    expect(status).toMatchObject({ paused: false, consecutiveFailures: 0, resumeToken: 'r1', failuresSince: NOW.toISOString() });
    expect(events).toEqual([expect.objectContaining({ reason: 'Resumed' })]);
    // the same token again changes nothing
    expect(run(trigger({}, status, { annotations: { 'svc.dev/resume': 'r1' } }), [...threeFailures, failed('d', '2030-01-01T00:11:00.000Z')], [], new Date('2030-01-01T00:12:00Z')).status.consecutiveFailures).toBe(1);
  });

  it('a manifest change (new generation) unpauses', () => {
    const paused = run(trigger(), threeFailures).status;
    expect(run(trigger({ prompt: 'fixed' }, paused, { generation: 2 }), threeFailures).status.paused).toBe(false);
  });

  it.each<[string, string, TriggerFire[], boolean, string | undefined]>([
    ['run_at ahead', '2030-01-01T01:00:00.000Z', [], false, '2030-01-01T01:00:00.000Z'],
    ['run_at fired', '2030-01-01T00:05:00.000Z', [fired('web-nightly-1893456300', '2030-01-01T00:05:00.000Z')], true, undefined],
    ['run_at inside the catch-up window, not fired yet', '2030-01-01T00:06:00.000Z', [], false, '2030-01-01T00:06:00.000Z'],
    ['run_at past the window without a fire: missed, dormant', '2030-01-01T00:04:00.000Z', [], true, undefined],
    ['a manual fire does not make a run_at trigger dormant', '2030-01-01T01:00:00.000Z', [fired('web-nightly-m-1', '2030-01-01T00:05:00.000Z')], false, '2030-01-01T01:00:00.000Z'],
  ])('%s', (_name, runAt, fires, dormant, nextFireAt) => {
    const { status } = run(trigger({ cron: undefined, runAt }), fires);
    expect(status.dormant).toBe(dormant);
    expect(status.nextFireAt).toBe(nextFireAt);
  });

  it('retention never moves it back: lastFiredAt stays, a fired run_at stays dormant once its fire is pruned, a new run_at is a new schedule', () => {
    const fires = [fired('web-nightly-1893456300', '2030-01-01T00:05:00.000Z'), fired('web-nightly-m-1', '2030-01-01T00:06:00.000Z')];
    const before = run(trigger({ cron: undefined, runAt: '2030-01-01T00:05:00.000Z' }), fires).status;
    expect(before).toMatchObject({ dormant: true, lastFiredAt: '2030-01-01T00:06:00.000Z' });
    const after = run(trigger({ cron: undefined, runAt: '2030-01-01T00:05:00.000Z' }, before), [fires[0]!]).status;
    expect(after).toMatchObject({ dormant: true, lastFiredAt: '2030-01-01T00:06:00.000Z' });
    expect(run(trigger({ cron: undefined, runAt: '2030-01-01T00:05:00.000Z' }, after), []).status.dormant).toBe(true);
    expect(run(trigger({ cron: undefined, runAt: '2030-01-01T01:00:00.000Z' }, after), []).status.dormant).toBe(false);
  });

  it('webhook and disabled triggers have no nextFireAt', () => {
    expect(run(trigger({ type: 'webhook', cron: undefined, secretEnv: 'S' })).status.nextFireAt).toBeUndefined();
    const disabled = run(trigger({ enabled: false })).status;
    expect(disabled.nextFireAt).toBeUndefined();
    expect(disabled.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'True', reason: 'Disabled' });
  });
});
