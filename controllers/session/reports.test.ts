import { describe, expect, it } from 'vitest';
import type { SessionStatus } from '../../src/resources/index.js';
import type { DaemonHealth } from '../../src/sandbox/index.js';
import { daemonReports, withPushedCheckpoint } from './reports.js';
import { parseCheckpointPushed } from '../../src/resources/index.js';

const BOOT = '2026-11-23T11:00:00.000Z';
const SHA = 'c'.repeat(40);
const OLD = 'b'.repeat(40);

function health(over: { engine?: Partial<DaemonHealth['engine']>; checkpoint?: Partial<NonNullable<DaemonHealth['checkpoint']>>; progress?: Partial<NonNullable<DaemonHealth['progress']>>; daemonState?: DaemonHealth['daemon']['state']; boot?: string } = {}): DaemonHealth {
  return {
    status: 'ok',
    daemon: { state: over.daemonState ?? 'ready', error: null, started_at: over.boot ?? BOOT },
    engine: { state: 'ready', restarts: 0, last_error: null, model_error: null, root_session_id: 'ses_1', initial_prompt_sent_at: null, run: { type: 'idle' }, ...over.engine },
    checkpoint: { enabled: true, ref: 'refs/svc/checkpoints/x', sha: null, at: null, restored: null, skipped: null, conversation: { restored: null, error: null }, writes: 0, last_error: null, ...over.checkpoint },
    progress: { state: 'ok', reason: null, since: BOOT, busy: false, last_event_at: null, stalls: 0, last_stall: null, ...over.progress },
    last_activity_at: null,
  };
}

const conditionOf = (out: ReturnType<typeof daemonReports>, type: string) => out.conditions.find((c) => c.type === type);
const eventsOf = (out: ReturnType<typeof daemonReports>) => out.events.map((e) => `${e.type} ${e.reason}: ${e.message}`);

describe('what the daemon reports becomes the Session status', () => {
  it.each<[string, SessionStatus, DaemonHealth, SessionStatus['checkpoint']]>([
    ['the latest checkpoint, its time in whole seconds', {}, health({ checkpoint: { sha: SHA, at: '2026-11-23T11:30:00.000Z' } }), { sha: SHA, at: '2026-11-23T11:30:00Z' }],
    ['a newer one replaces it', { checkpoint: { sha: OLD, at: '2026-11-23T10:00:00Z' } }, health({ checkpoint: { sha: SHA, at: '2026-11-23T11:30:00Z' } }), { sha: SHA, at: '2026-11-23T11:30:00Z' }],
    ['a sandbox that knows none (checkpoints off) keeps the recorded one', { checkpoint: { sha: OLD, at: '2026-11-23T10:00:00Z' } }, health(), { sha: OLD, at: '2026-11-23T10:00:00Z' }],
    ['none at all', {}, health(), undefined],
  ])('checkpoint: %s', (_name, before, h, expected) => {
    expect(daemonReports(before, h).checkpoint).toEqual(expected);
  });

  it.each<[string, DaemonHealth, string | undefined, string | undefined]>([
    ['fine', health(), 'True EngineProgressing', 'True NoModelError'],
    ['stalled: the daemon\'s reason', health({ progress: { state: 'stalled', reason: 'the turn showed no engine event for 3 s' }, engine: { state: 'restarting' } }), 'False EngineStalled the turn showed no engine event for 3 s; svc-agent aborts its turn and restarts it', undefined],
    ['the model unreachable: the engine\'s error', health({ engine: { run: { type: 'retry', attempt: 3 }, model_error: 'cannot reach the model: ECONNREFUSED (attempt 3)' } }), 'True EngineProgressing', 'False ModelUnreachable cannot reach the model: ECONNREFUSED (attempt 3)'],
    ['an older daemon without a progress report', { ...health(), progress: undefined }, undefined, 'True NoModelError'],
    ['an engine still booting says nothing of the model yet', health({ engine: { state: 'booting' } }), 'True EngineProgressing', undefined],
    ['the initial prompt refused: why, and that it is tried again', health({ engine: { root_session_error: 'engine refused the initial prompt (500)', initial_prompt_pending: true } }), 'False RootSessionFailed the initial prompt was not delivered: engine refused the initial prompt (500); svc-agent tries again', 'True NoModelError'],
    ['no root session yet', health({ engine: { root_session_id: null, root_session_error: 'socket hang up', initial_prompt_pending: true } }), 'False RootSessionFailed the root session could not be opened: socket hang up; svc-agent tries again', 'True NoModelError'],
    ['the last turn failed: the engine\'s error, until another turn starts', health({ engine: { turn_error: 'Model not found: nosuch/x.' } }), 'False TurnFailed the engine\'s last turn failed: Model not found: nosuch/x.; a new prompt starts another', 'True NoModelError'],
    ['a prompt not delivered says more than a failed turn', health({ engine: { root_session_error: 'engine refused the initial prompt (500)', turn_error: 'x' } }), 'False RootSessionFailed the initial prompt was not delivered: engine refused the initial prompt (500); svc-agent tries again', 'True NoModelError'],
    ['a stall says more than a root session error', health({ progress: { state: 'stalled', reason: 'stuck' }, engine: { root_session_error: 'x' } }), 'False EngineStalled stuck; svc-agent aborts its turn and restarts it', 'True NoModelError'],
  ])('conditions: %s', (_name, h, progressing, model) => {
    const out = daemonReports({}, h, 3);
    const show = (type: string) => { const c = conditionOf(out, type); return c && `${c.status} ${c.reason}${c.status === 'False' ? ` ${c.message}` : ''}`; };
    expect(show('Progressing')).toBe(progressing);
    expect(show('ModelReachable')).toBe(model);
    for (const c of out.conditions) expect(c.observedGeneration).toBe(3);
  });

  it('a Warning when the model becomes unreachable, not at every retry', () => {
    const retrying = health({ engine: { model_error: 'cannot reach the model: offline (attempt 1)' } });
    const first = daemonReports({}, retrying);
    expect(eventsOf(first)).toEqual(['Warning ModelUnreachable: cannot reach the model: offline (attempt 1)']);
    const unreachable = { conditions: [{ type: 'ModelReachable', status: 'False' as const, reason: 'ModelUnreachable', message: 'x', lastTransitionTime: BOOT }] };
    expect(eventsOf(daemonReports(unreachable, health({ engine: { model_error: 'cannot reach the model: offline (attempt 2)' } })))).toEqual([]);
  });

  it('a Warning when a turn fails, not again at the next look; another failure is another Warning', () => {
    const failed = (why: string) => health({ engine: { turn_error: why } });
    const first = daemonReports({}, failed('Model not found: nosuch/x.'));
    const message = 'the engine\'s last turn failed: Model not found: nosuch/x.; a new prompt starts another';
    expect(eventsOf(first)).toEqual([`Warning TurnFailed: ${message}`]);
    const seen = { conditions: first.conditions.map((c) => ({ ...c, lastTransitionTime: BOOT })) };
    expect(eventsOf(daemonReports(seen, failed('Model not found: nosuch/x.')))).toEqual([]);
    expect(eventsOf(daemonReports(seen, failed('Unauthorized: invalid api key')))).toEqual(['Warning TurnFailed: the engine\'s last turn failed: Unauthorized: invalid api key; a new prompt starts another']);
  });
});

describe('the Events of a sandbox boot, once each', () => {
  const restored = health({ checkpoint: { sha: SHA, at: '2026-11-23T11:30:00Z', restored: { sha: SHA, at: '2026-11-23T10:59:00Z' } } });
  const skipped = health({ checkpoint: { skipped: { sha: OLD, reason: 'the branch moved since the checkpoint (someone pushed to it)' } } });

  it.each<[string, SessionStatus, DaemonHealth, string[], SessionStatus['daemonReports']]>([
    ['restored: Normal, naming the sha', {}, restored, [`Normal CheckpointRestored: restored checkpoint ${SHA.slice(0, 12)} (2026-11-23T10:59:00Z): the uncommitted work of the session's last sandbox is back on top of the branch`], { daemonStartedAt: BOOT, checkpoint: true, stalls: 0 }],
    ['skipped: Warning, with the reason', {}, skipped, [`Warning CheckpointSkipped: left checkpoint ${OLD.slice(0, 12)} alone: the branch moved since the checkpoint (someone pushed to it)`], { daemonStartedAt: BOOT, checkpoint: true, stalls: 0 }],
    ['nothing to restore: no Event, but reported', {}, health(), [], { daemonStartedAt: BOOT, checkpoint: true, stalls: 0 }],
    ['reported for this boot already (a restarted operator): no Event', { daemonReports: { daemonStartedAt: BOOT, checkpoint: true, stalls: 0 } }, restored, [], { daemonStartedAt: BOOT, checkpoint: true, stalls: 0 }],
    ['a new boot (a restarted sandbox) reports again', { daemonReports: { daemonStartedAt: '2026-11-23T09:00:00.000Z', checkpoint: true, stalls: 2 } }, restored, [`Normal CheckpointRestored: restored checkpoint ${SHA.slice(0, 12)} (2026-11-23T10:59:00Z): the uncommitted work of the session's last sandbox is back on top of the branch`], { daemonStartedAt: BOOT, checkpoint: true, stalls: 0 }],
    ['still restoring: not decided yet', {}, health({ daemonState: 'restoring' }), [], { daemonStartedAt: BOOT, checkpoint: false, stalls: 0 }],
    ['a stall: a Warning with its reason', { daemonReports: { daemonStartedAt: BOOT, checkpoint: true, stalls: 0 } }, health({ progress: { stalls: 1, last_stall: { at: BOOT, reason: 'the health check did not answer 2 times' } } }), ['Warning EngineStalled: the engine was stuck (the health check did not answer 2 times); svc-agent aborted its turn and restarted it (stall 1 of this sandbox)'], { daemonStartedAt: BOOT, checkpoint: true, stalls: 1 }],
    ['the same stall again: no Event', { daemonReports: { daemonStartedAt: BOOT, checkpoint: true, stalls: 1 } }, health({ progress: { stalls: 1, last_stall: { at: BOOT, reason: 'x' } } }), [], { daemonStartedAt: BOOT, checkpoint: true, stalls: 1 }],
  ])('%s', (_name, before, h, events, recorded) => {
    const out = daemonReports(before, h);
    expect(eventsOf(out)).toEqual(events);
    expect(out.daemonReports).toEqual(recorded);
  });

  it('a daemon that does not say when it started reports no boot Events', () => {
    const h = { ...restored, daemon: { state: 'ready' as const, error: null } };
    expect(daemonReports({}, h)).toMatchObject({ events: [], daemonReports: undefined });
  });
});


describe('a checkpoint the git gateway saw pushed (a stop\'s, after the last health read)', () => {
  const A = 'a'.repeat(40);
  const B = 'b'.repeat(40);
  it.each([
    ['none recorded: the pushed one', undefined, `2030-01-01T00:00:05.123Z ${B}`, { sha: B, at: '2030-01-01T00:00:05Z' }],
    ['newer than the recorded one: it', { sha: A, at: '2030-01-01T00:00:00Z' }, `2030-01-01T00:00:05.000Z ${B}`, { sha: B, at: '2030-01-01T00:00:05Z' }],
    ['older than the recorded one (health moved on): the recorded one', { sha: A, at: '2030-01-01T00:00:09Z' }, `2030-01-01T00:00:05.000Z ${B}`, { sha: A, at: '2030-01-01T00:00:09Z' }],
    ['the same sha: the recorded one', { sha: B, at: '2030-01-01T00:00:03Z' }, `2030-01-01T00:00:05.000Z ${B}`, { sha: B, at: '2030-01-01T00:00:03Z' }],
    ['no annotation, or a malformed one: the recorded one', { sha: A, at: '2030-01-01T00:00:00Z' }, 'yesterday zzz', { sha: A, at: '2030-01-01T00:00:00Z' }],
  ] as const)('%s', (_name, recorded, annotation, expected) => {
    expect(withPushedCheckpoint(recorded, parseCheckpointPushed(annotation))).toEqual(expected);
  });
});
