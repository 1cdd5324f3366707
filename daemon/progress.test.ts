// The progress watcher's view of the engine's sessions from its events: busy, retrying a model
// call (what the state events tell the API, so that ModelReachable turns at once), idle.
import { describe, expect, it } from 'vitest';
import type { EngineSupervisor } from './engine.js';
import type { EngineEvent, EngineEvents } from './events.js';
import { ProgressWatcher } from './progress.js';

function watcher(): { watch: ProgressWatcher; turnsEnded: () => number } {
  let ended = 0;
  const events = { on: () => undefined } as unknown as EngineEvents;
  const policy = { timeoutMs: 600_000, healthIntervalMs: 5_000, healthTimeoutMs: 1_000, healthFailures: 3 };
  const watch = new ProgressWatcher({} as EngineSupervisor, events, policy, { onTurnEnd: () => { ended += 1; }, onStall: async () => undefined });
  return { watch, turnsEnded: () => ended };
}

const status = (sessionID: string, type: string): EngineEvent => ({ type: 'session.status', properties: { sessionID, status: { type } } });

describe('ProgressWatcher', () => {
  it('is retrying while a session retries a model call, busy all along; the turn ends once', () => {
    const { watch, turnsEnded } = watcher();
    watch.onEvent(status('root', 'busy'));
    expect([watch.busy, watch.retrying]).toEqual([true, false]);
    watch.onEvent(status('root', 'retry'));
    expect([watch.busy, watch.retrying]).toEqual([true, true]);
    watch.onEvent(status('root', 'busy'));
    expect([watch.busy, watch.retrying]).toEqual([true, false]);
    expect(turnsEnded()).toBe(0);
    watch.onEvent({ type: 'session.idle', properties: { sessionID: 'root' } });
    expect([watch.busy, watch.retrying, turnsEnded()]).toEqual([false, false, 1]);
  });
});
