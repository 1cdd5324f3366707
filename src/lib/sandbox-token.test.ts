import { describe, expect, it } from 'vitest';
import { newSandboxToken, sandboxTokenSession, signCloneCredential, verifyCloneCredential } from './sandbox-token.js';

const SESSION = '0b6c3f52-8d1e-4c55-9b1a-2f0e6f1c9a10';
const OTHER = '1b6c3f52-8d1e-4c55-9b1a-2f0e6f1c9a10';
const PROJECT = 'e1f2a3b4-0000-4000-8000-000000000001';
const NOW = Date.parse('2026-11-23T12:00:00Z');

describe('sandbox token', () => {
  it('names its session and is random', () => {
    const a = newSandboxToken(SESSION);
    expect(a).toMatch(/^svcsbx\.0b6c3f52-8d1e-4c55-9b1a-2f0e6f1c9a10\.[A-Za-z0-9_-]{43}$/);
    expect(newSandboxToken(SESSION)).not.toBe(a);
    expect(sandboxTokenSession(a)).toBe(SESSION);
    expect(sandboxTokenSession('svc_abc')).toBeUndefined();
    expect(() => newSandboxToken('not-a-uuid')).toThrow();
  });
});

describe('clone credential', () => {
  const token = newSandboxToken(SESSION);
  it('verifies for its session, project and lifetime only', () => {
    const c = signCloneCredential(token, PROJECT, SESSION, NOW);
    expect(c.username).toBe(SESSION);
    expect(c.expires_at).toBe('2026-11-23T13:00:00.000Z');
    expect(verifyCloneCredential(token, PROJECT, SESSION, c.password, NOW)).toBe(true);
    expect(verifyCloneCredential(token, PROJECT, SESSION, c.password, NOW + 3600_000)).toBe(false);
    expect(verifyCloneCredential(token, PROJECT, OTHER, c.password, NOW)).toBe(false);
    expect(verifyCloneCredential(token, 'other-project', SESSION, c.password, NOW)).toBe(false);
    expect(verifyCloneCredential(newSandboxToken(SESSION), PROJECT, SESSION, c.password, NOW)).toBe(false);
    expect(verifyCloneCredential(token, PROJECT, SESSION, 'garbage', NOW)).toBe(false);
  });

  it('caps the lifetime at one hour', () => {
    const c = signCloneCredential(token, PROJECT, SESSION, NOW, 86_400);
    expect(Date.parse(c.expires_at) - NOW).toBe(3600_000);
    // a forged far-future exp is refused even with a valid-looking mac
    const exp = Math.floor(NOW / 1000) + 7200;
    expect(verifyCloneCredential(token, PROJECT, SESSION, `${exp}.${'A'.repeat(43)}`, NOW)).toBe(false);
  });
});
