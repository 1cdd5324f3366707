// The progress watcher's view of the engine's sessions from its events: busy, retrying a model
// call (what the state events tell the API, so that ModelReachable turns at once), idle; the
// error a session's latest turn ended with.
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

  it('keeps the first error of a session\'s turn (opencode sends it again with its stack after the turn) until its next turn starts; an abort is none', () => {
    const { watch } = watcher();
    const error = (sessionID: string, name: string, message?: string): EngineEvent => ({ type: 'session.error', properties: { sessionID, error: { name, ...(message === undefined ? {} : { data: { message } }) } } });
    watch.onEvent(status('root', 'busy'));
    watch.onEvent(error('root', 'UnknownError', 'Model not found: nosuch/x.'));
    watch.onEvent(status('root', 'idle'));
    watch.onEvent(error('root', 'UnknownError', 'ProviderModelNotFoundError: Model not found: nosuch/x.\n    at <anonymous> (chunk.js:1:2)'));
    expect(watch.lastTurnError('root')).toBe('Model not found: nosuch/x.');
    expect([watch.lastTurnError('child'), watch.lastTurnError(null)]).toEqual([null, null]);
    // the next turn starts: its own outcome only
    watch.onEvent(status('root', 'busy'));
    expect(watch.lastTurnError('root')).toBeNull();
    watch.onEvent(error('root', 'MessageAbortedError', 'The operation was aborted.'));
    watch.onEvent(status('root', 'idle'));
    expect(watch.lastTurnError('root')).toBeNull();
    // no message: its name; a multi-line message: its first line
    watch.onEvent(status('root', 'busy'));
    watch.onEvent(error('root', 'ProviderAuthError'));
    expect(watch.lastTurnError('root')).toBe('ProviderAuthError');
    watch.onEvent(status('root', 'idle'));
    watch.onEvent(status('root', 'busy'));
    watch.onEvent(error('root', 'APIError', '  Unauthorized: invalid api key\nmore  '));
    expect(watch.lastTurnError('root')).toBe('APIError: Unauthorized: invalid api key');
  });

  it('remembers the errors of a bounded number of sessions (sub-agents have sessions of their own)', () => {
    const { watch } = watcher();
    for (let i = 0; i < 100; i += 1) {
      watch.onEvent(status(`s${i}`, 'busy'));
      watch.onEvent({ type: 'session.error', properties: { sessionID: `s${i}`, error: { name: 'UnknownError', data: { message: `failure ${i}` } } } });
    }
    expect(watch.lastTurnError('s99')).toBe('failure 99');
    expect(watch.lastTurnError('s0')).toBeNull();
  });
});
