import { describe, expect, it } from 'vitest';
import { sessionCredentialsLive } from './session-credentials.js';
import type { Session } from './session.js';

function session(status: string | undefined, options: { desired?: 'running' | 'stopped'; deleting?: boolean } = {}): Session {
  return {
    apiVersion: 'svc.dev/v1alpha1', kind: 'Session',
    metadata: { name: 'x', ...(options.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
    spec: { projectRef: { name: 'p' }, agent: 'default', baseRef: 'main', desiredState: options.desired ?? 'running' },
    ...(status ? { status: { status: status as never } } : {}),
  };
}

describe('sessionCredentialsLive', () => {
  it.each([
    ['a new session (no status yet)', session(undefined), true],
    ['provisioning', session('provisioning'), true],
    ['running', session('running'), true],
    ['running with a stop under way (the sandbox may still save its work)', session('running', { desired: 'stopped' }), true],
    ['provisioning after a wake', session('provisioning', { desired: 'running' }), true],
    ['stopped', session('stopped', { desired: 'stopped' }), false],
    ['stopped, woken but not yet picked up by the controller', session('stopped', { desired: 'running' }), false],
    ['failed', session('failed'), false],
    ['being deleted', session('running', { deleting: true }), false],
    ['gone', undefined, false],
    ['null', null, false],
  ])('%s: %s', (_what, value, live) => {
    expect(sessionCredentialsLive(value)).toBe(live);
  });
});
