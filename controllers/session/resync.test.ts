import { describe, expect, it } from 'vitest';
import type { DaemonHealth } from '../../src/sandbox/index.js';
import { idleDeadlineMs, sessionRequeueAfterMs } from './resync.js';

const NOW = new Date('2026-11-23T12:00:00Z');
const MIN = 60_000;
const resync = { provisioningMs: 5_000, runningMs: 60_000 };

function health(over: Partial<DaemonHealth['engine']> = {}, lastActivity: string | null = '2026-11-23T11:59:00Z'): DaemonHealth {
  return {
    status: 'ok',
    daemon: { state: 'ready', error: null, started_at: '2026-11-23T11:00:00Z' },
    engine: { state: 'ready', restarts: 0, last_error: null, root_session_id: 'ses_1', initial_prompt_sent_at: null, run: { type: 'idle' }, ...over },
    last_activity_at: lastActivity,
  };
}

describe('idleDeadlineMs', () => {
  it.each([
    ['the last activity plus the timeout', health(), 10 * MIN, Date.parse('2026-11-23T12:09:00Z')],
    ['no activity yet: from the daemon start', health({}, null), 10 * MIN, Date.parse('2026-11-23T11:10:00Z')],
    ['a busy engine is never idle', health({ run: { type: 'busy' } }), MIN, null],
    ['an engine that is not ready is never idle', health({ state: 'restarting' }), MIN, null],
    ['no health: unknown', null, MIN, null],
  ] as const)('%s', (_name, h, timeout, expected) => {
    expect(idleDeadlineMs(h, timeout)).toBe(expected);
  });
});

describe('sessionRequeueAfterMs: the safety net under the daemon\'s events, and the idle clock', () => {
  it.each([
    ['starting: the provisioning interval', 'provisioning', health(), 30 * MIN, 5_000],
    ['running, idle far away: the running interval', 'running', health(), 30 * MIN, 60_000],
    ['running, idle sooner: at the idle deadline', 'running', health(), 90_000, 30_000],
    ['running, deadline past (a clock off): not a loop', 'running', health({}, '2026-11-23T10:00:00Z'), MIN, 1_000],
    ['running and busy: the running interval (the turn\'s end is an event)', 'running', health({ run: { type: 'busy' } }), MIN, 60_000],
    ['running, health unknown: the running interval', 'running', null, MIN, 60_000],
    ['stopped: nothing to look at', 'stopped', null, MIN, undefined],
    ['failed: nothing to look at', 'failed', null, MIN, undefined],
  ] as const)('%s', (_name, status, h, timeout, expected) => {
    expect(sessionRequeueAfterMs(status, { health: h, idleTimeoutMs: timeout, now: NOW, resync })).toBe(expected);
  });
});
