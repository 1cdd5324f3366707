import { describe, expect, it } from 'vitest';
import { activeSessionCount, capReached, defaultSessionCap, sessionCap } from './session-cap.js';
import type { Session } from './session.js';

function session(desiredState: 'running' | 'stopped', status?: Session['status'], deleting = false): Session {
  return {
    apiVersion: 'svc.dev/v1alpha1', kind: 'Session',
    metadata: { name: 'x', ...(deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
    spec: { projectRef: { name: 'p' }, agent: 'default', baseRef: 'main', desiredState },
    status,
  };
}

describe('session cap', () => {
  it('reads the default from the environment, falling back to 10', () => {
    expect(defaultSessionCap({})).toBe(10);
    expect(defaultSessionCap({ SVC_MAX_CONCURRENT_SESSIONS: '3' })).toBe(3);
    expect(defaultSessionCap({ SVC_MAX_CONCURRENT_SESSIONS: 'lots' })).toBe(10);
    expect(defaultSessionCap({ SVC_MAX_CONCURRENT_SESSIONS: '0' })).toBe(0);
  });

  it('lets the Namespace annotation override the default', () => {
    expect(sessionCap({ 'svc.dev/max-concurrent-sessions': '2' }, 10)).toBe(2);
    expect(sessionCap({ 'svc.dev/max-concurrent-sessions': '-1' }, 10)).toBe(10);
    expect(sessionCap(undefined, 7)).toBe(7);
  });

  it('counts sessions that should run and have not ended', () => {
    const sessions = [
      session('running'),
      session('running', { status: 'provisioning' }),
      session('running', { status: 'running' }),
      session('running', { status: 'failed' }),
      session('running', { status: 'stopped' }),
      session('stopped', { status: 'running' }),
      session('running', { status: 'running' }, true),
    ];
    expect(activeSessionCount(sessions)).toBe(3);
    expect(capReached(sessions, 3)).toBe(true);
    expect(capReached(sessions, 4)).toBe(false);
  });
});
