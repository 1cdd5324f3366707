import { describe, expect, it } from 'vitest';
import { cloneCredentialExpired, parseCloneCredential } from './git-credential.js';

describe('parseCloneCredential', () => {
  it('accepts {username, password, expires_at}', () => {
    const body = { username: 'x-access-token', password: 'ghs_abc', expires_at: '2030-01-01T00:00:00Z', extra: 1 };
    expect(parseCloneCredential(body)).toEqual({ username: 'x-access-token', password: 'ghs_abc', expires_at: '2030-01-01T00:00:00Z' });
  });

  it.each([
    [null, 'must be a JSON object'],
    [[], 'must be a JSON object'],
    [{ password: 'p', expires_at: '2030-01-01T00:00:00Z' }, '"username"'],
    [{ username: 'u', password: '', expires_at: '2030-01-01T00:00:00Z' }, '"password"'],
    [{ username: 'u', password: 'p' }, '"expires_at"'],
    [{ username: 'u', password: 'p', expires_at: 'tomorrow' }, 'RFC 3339'],
    [{ username: 'u', password: 'p\nhost=evil', expires_at: '2030-01-01T00:00:00Z' }, 'newlines'],
  ])('refuses %j', (body, message) => {
    expect(() => parseCloneCredential(body)).toThrow(message);
  });

  it('never echoes the password in an error', () => {
    expect(() => parseCloneCredential({ username: 'u', password: 'secret-pw', expires_at: 'x' })).toThrow(/^(?!.*secret-pw)/);
  });
});

describe('cloneCredentialExpired', () => {
  const at = (iso: string) => ({ username: 'u', password: 'p', expires_at: iso });
  it('counts a credential as expired 30 s before its expiry', () => {
    const now = Date.parse('2030-01-01T00:00:00Z');
    expect(cloneCredentialExpired(at('2030-01-01T00:01:00Z'), now)).toBe(false);
    expect(cloneCredentialExpired(at('2030-01-01T00:00:30Z'), now)).toBe(true);
    expect(cloneCredentialExpired(at('2029-12-31T23:59:00Z'), now)).toBe(true);
  });
});
