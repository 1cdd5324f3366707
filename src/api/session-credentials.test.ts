import { describe, expect, it } from 'vitest';
import type { Session, SessionSecret } from '../resources/index.js';
import { sessionTokenCheck } from './session-credentials.js';
import type { Principal } from './tokens.js';

const SESSION = '44444444-4444-4444-8444-444444444444';
const PROJECT = '11111111-1111-4111-8111-111111111111';
const CLI = 'svc_current-cli-token';

const b64 = (v: string) => Buffer.from(v).toString('base64');
const secret = (cliToken: string): SessionSecret => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name: `svc-session-${SESSION}` }, data: { sandboxToken: b64('svcsbx.x'), cliToken: b64(cliToken) } });
const session = (status: string | undefined, project = PROJECT): Session => ({
  apiVersion: 'svc.dev/v1alpha1', kind: 'Session',
  metadata: { name: SESSION, ownerReferences: [{ apiVersion: 'svc.dev/v1alpha1', kind: 'Project', name: 'p', uid: project, controller: true }] },
  spec: { projectRef: { name: 'p' }, agent: 'default', baseRef: 'main', desiredState: 'running' },
  ...(status ? { status: { status: status as never } } : {}),
});
const principal: Principal & { sessionId: string } = { tokenName: 't', userId: SESSION, access: 'write', projectUid: PROJECT, capabilities: new Set(), sessionId: SESSION };

describe('sessionTokenCheck', () => {
  const check = (s: Session | undefined, sec: SessionSecret | undefined, token = CLI, p = principal) =>
    sessionTokenCheck({ session: async () => s, secret: async () => sec })(p, token);

  it.each([
    ['running, the current token', session('running'), secret(CLI), CLI, principal, true],
    ['provisioning (a wake under way), the current token', session('provisioning'), secret(CLI), CLI, principal, true],
    ['stopped', session('stopped'), secret(CLI), CLI, principal, false],
    ['failed', session('failed'), secret(CLI), CLI, principal, false],
    ['the Session is gone', undefined, secret(CLI), CLI, principal, false],
    ['the Session Secret is gone', session('running'), undefined, CLI, principal, false],
    ['a token the Session Secret no longer holds (rotated on a wake)', session('running'), secret('svc_new-token'), CLI, principal, false],
    ['a Session of another project', session('running', '22222222-2222-4222-8222-222222222222'), secret(CLI), CLI, principal, false],
    ['a label that is no session name', session('running'), secret(CLI), CLI, { ...principal, sessionId: '../x' }, false],
  ])('%s', async (_what, s, sec, token, p, live) => {
    expect(await check(s, sec, token, p)).toBe(live);
  });
});
