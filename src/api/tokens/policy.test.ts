import { describe, expect, it } from 'vitest';
import type { Principal } from '../tokens.js';
import { canManageToken, narrowGrant, parseCreateToken, type TokenRequest } from './policy.js';

const NOW = new Date('2026-01-01T00:00:00Z');
const USER = '33333333-3333-4333-8333-333333333333';
const OTHER_USER = '44444444-4444-4444-8444-444444444444';
const P1 = '11111111-1111-4111-8111-111111111111';
const P2 = '22222222-2222-4222-8222-222222222222';

const principal = (p: Partial<Principal> = {}): Principal => ({ tokenName: 't', userId: USER, access: 'write', projectUid: null, capabilities: '*', expiresAt: null, ...p });
const request = (r: Partial<TokenRequest> = {}): TokenRequest => ({ name: 'bot', access: 'read', capabilities: [], expiresAt: null, ...r });

describe('parseCreateToken', () => {
  it('defaults to read, no capability, no expiry; computes expires_in from now', () => {
    expect(parseCreateToken({ name: 'ci' }, NOW)).toEqual({ name: 'ci', access: 'read', capabilities: [], expiresAt: null });
    expect(parseCreateToken({ name: 'ci', access: 'write', project_id: P1, capabilities: ['project.read', 'project.gitops.push', 'project.read'], expires_in: '30d', user_id: OTHER_USER }, NOW)).toEqual({
      name: 'ci', access: 'write', projectUid: P1, capabilities: ['project.gitops.push', 'project.read'], expiresAt: '2026-01-31T00:00:00.000Z', userId: OTHER_USER,
    });
    expect(parseCreateToken({ name: 'ci', expires_at: '2026-02-01T00:00:00+01:00' }, NOW).expiresAt).toBe('2026-01-31T23:00:00.000Z');
  });

  it('takes a null expires_in or expires_at as not given (no expiry of its own)', () => {
    expect(parseCreateToken({ name: 'ci', expires_in: null }, NOW).expiresAt).toBeNull();
    expect(parseCreateToken({ name: 'ci', expires_at: null }, NOW).expiresAt).toBeNull();
    expect(parseCreateToken({ name: 'ci', expires_in: null, expires_at: '2026-02-01T00:00:00Z' }, NOW).expiresAt).toBe('2026-02-01T00:00:00.000Z');
  });

  it.each([
    [{}, /name is required/],
    [{ name: 'Bad Name' }, /lower-case/],
    [{ name: 'ci', access: 'admin' }, /access must be read or write/],
    [{ name: 'ci', project_id: 'demo' }, /project_id must be a project id/],
    [{ name: 'ci', capabilities: ['project.fly'] }, /unknown capability project.fly/],
    [{ name: 'ci', capabilities: 'all' }, /capabilities must be an array/],
    [{ name: 'ci', expires_in: '30 days' }, /expires_in "30 days" is not a duration/],
    [{ name: 'ci', expires_at: '2020-01-01T00:00:00Z' }, /in the past/],
    [{ name: 'ci', expires_in: '1d', expires_at: '2030-01-01T00:00:00Z' }, /not both/],
    [{ name: 'ci', user_id: 'bob' }, /user_id must be a UUID/],
    [{ name: 'ci', expires_in: 30 }, /expires_in must be a string/],
    [{ name: 'ci', expires_at: 0 }, /expires_at must be an RFC 3339 string/],
    [{ name: 'ci', value: 'svc_x' }, /unknown field\(s\): value/],
    [[], /JSON object/],
  ])('refuses %j', (body, message) => {
    expect(() => parseCreateToken(body, NOW)).toThrow(message);
  });
});

describe('narrowGrant: never wider than the caller', () => {
  it('an admin grants anything; the new token acts as the caller unless user_id names another', () => {
    expect(narrowGrant(principal(), request({ access: 'write', capabilities: ['*'], projectUid: P1 }))).toEqual({
      name: 'bot', userId: USER, access: 'write', projectUid: P1, capabilities: ['*'], expiresAt: null, createdBy: USER,
    });
    expect(narrowGrant(principal(), request({ userId: OTHER_USER })).userId).toBe(OTHER_USER);
  });

  it('anyone may name their own user_id', () => {
    const scoped = principal({ projectUid: P1, capabilities: new Set(['project.members.manage']) });
    expect(narrowGrant(scoped, request({ userId: USER.toUpperCase() })).userId).toBe(USER);
  });

  it('a project-scoped caller gets its own project by default and nothing else', () => {
    const scoped = principal({ projectUid: P1 });
    expect(narrowGrant(scoped, request()).projectUid).toBe(P1);
    expect(() => narrowGrant(scoped, request({ projectUid: P2 }))).toThrow(/scoped to another project/);
    expect(() => narrowGrant(scoped, request({ projectUid: null }))).toThrow(/must be too/);
  });

  it.each([
    ['write from a read token', principal({ access: 'read' }), request({ access: 'write' }), /read access only/],
    ['a capability the caller lacks', principal({ capabilities: new Set(['project.members.manage']) }), request({ capabilities: ['project.gitops.merge'] }), /lacks project.gitops.merge/],
    ['* from a caller without *', principal({ capabilities: new Set(['project.members.manage']) }), request({ capabilities: ['*'] }), /lacks \*/],
    ['a later expiry than the caller', principal({ expiresAt: '2026-02-01T00:00:00.000Z' }), request({ expiresAt: '2026-03-01T00:00:00.000Z' }), /expires at/],
    ['another user_id from a project-scoped caller with *', principal({ projectUid: P1 }), request({ userId: OTHER_USER }), /another user_id/],
    ['another user_id from an unscoped caller without *', principal({ capabilities: new Set(['project.members.manage']) }), request({ userId: OTHER_USER }), /another user_id/],
  ])('403 for %s', (_what, caller, req, message) => {
    expect(() => narrowGrant(caller, req)).toThrow(expect.objectContaining({ status: 403, message: expect.stringMatching(message) }));
  });

  it('an expiring caller hands out its own expiry at the latest', () => {
    const caller = principal({ expiresAt: '2026-02-01T00:00:00.000Z' });
    expect(narrowGrant(caller, request()).expiresAt).toBe('2026-02-01T00:00:00.000Z');
    expect(narrowGrant(caller, request({ expiresAt: '2026-01-15T00:00:00.000Z' })).expiresAt).toBe('2026-01-15T00:00:00.000Z');
  });
});

describe('canManageToken', () => {
  const info = (projectUid: string | null) => ({ name: 'x', secretName: 's', userId: USER, access: 'read' as const, projectUid, capabilities: [], expiresAt: null, createdAt: null, createdBy: null, lastUsedAt: null, sessionId: null });
  it('an unscoped caller manages all; a scoped one only its project', () => {
    expect([null, P1, P2].map((p) => canManageToken(principal(), info(p)))).toEqual([true, true, true]);
    expect([null, P1, P2].map((p) => canManageToken(principal({ projectUid: P1 }), info(p)))).toEqual([false, true, false]);
  });
});
