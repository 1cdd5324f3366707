import { describe, expect, it } from 'vitest';
import { createHmac } from 'node:crypto';
import {
  NonceCache, encodeContextHeader, scopeAllows, signContextHeader, verifyContextHeader, type ContextTarget,
} from './context-header.js';

const KEY = 'k3y';
const SID = 'session-1';
const NOW = 1_800_000_000;

function verify(value: string | undefined, target: ContextTarget = { kind: 'engine' }, now = NOW, nonces = new NonceCache()) {
  return verifyContextHeader(value, { key: KEY, sessionId: SID, target, nonces, now });
}

describe('signContextHeader', () => {
  it('produces v1.<base64url payload>.<base64url HMAC-SHA256 over "v1." + payload>', () => {
    const value = signContextHeader(KEY, { sub: 'u1', sid: SID, scope: 'engine', now: NOW, ttlSeconds: 120, nonce: 'n1' });
    const [version, payload, sig] = value.split('.');
    expect(version).toBe('v1');
    expect(payload).not.toMatch(/[=+/]/);
    expect(JSON.parse(Buffer.from(payload!, 'base64url').toString())).toEqual({ sub: 'u1', sid: SID, scope: 'engine', iat: NOW, exp: NOW + 120, nonce: 'n1' });
    expect(sig).toBe(createHmac('sha256', KEY).update(`v1.${payload}`).digest('base64url'));
  });

  it('refuses a lifetime over 300 s, a bad scope and an empty key', () => {
    expect(() => signContextHeader(KEY, { sub: 'u', sid: SID, scope: '*', ttlSeconds: 301 })).toThrow(/ttlSeconds/);
    expect(() => signContextHeader(KEY, { sub: 'u', sid: SID, scope: 'proxy:0' as 'proxy' })).toThrow(/scope/);
    expect(() => signContextHeader('', { sub: 'u', sid: SID, scope: '*' })).toThrow(/key/);
  });
});

describe('verifyContextHeader', () => {
  const good = () => signContextHeader(KEY, { sub: 'u1', sid: SID, scope: '*', now: NOW });

  it('accepts a fresh header once', () => {
    const nonces = new NonceCache();
    const value = good();
    expect(verify(value, { kind: 'engine' }, NOW, nonces)).toMatchObject({ sub: 'u1', sid: SID });
    expect(verify(value, { kind: 'engine' }, NOW, nonces)).toBeNull();
  });

  it.each([
    ['absent', undefined],
    ['wrong version', good().replace(/^v1/, 'v2')],
    ['two parts', good().split('.').slice(0, 2).join('.')],
    ['bad signature', `${good().slice(0, -2)}AA`],
    ['signed with another key', signContextHeader('other', { sub: 'u', sid: SID, scope: '*', now: NOW })],
    ['another session', signContextHeader(KEY, { sub: 'u', sid: 'other', scope: '*', now: NOW })],
    ['payload not JSON', encodeContextHeader(KEY, {}).replace(/^v1\.[^.]+/, 'v1.bm90IGpzb24')],
    ['missing nonce', encodeContextHeader(KEY, { sub: 'u', sid: SID, scope: '*', iat: NOW, exp: NOW + 60 })],
    ['unknown scope', encodeContextHeader(KEY, { sub: 'u', sid: SID, scope: 'admin', iat: NOW, exp: NOW + 60, nonce: 'n' })],
    ['lifetime 301 s', encodeContextHeader(KEY, { sub: 'u', sid: SID, scope: '*', iat: NOW, exp: NOW + 301, nonce: 'n' })],
    ['exp before iat', encodeContextHeader(KEY, { sub: 'u', sid: SID, scope: '*', iat: NOW, exp: NOW - 1, nonce: 'n' })],
  ])('refuses %s', (_name, value) => {
    expect(verify(value)).toBeNull();
  });

  it('allows 30 s of clock skew on both ends, not more', () => {
    const value = () => signContextHeader(KEY, { sub: 'u', sid: SID, scope: '*', now: NOW, ttlSeconds: 60 });
    expect(verify(value(), { kind: 'engine' }, NOW - 30)).not.toBeNull();
    expect(verify(value(), { kind: 'engine' }, NOW - 31)).toBeNull();
    expect(verify(value(), { kind: 'engine' }, NOW + 60 + 29)).not.toBeNull();
    expect(verify(value(), { kind: 'engine' }, NOW + 60 + 30)).toBeNull();
  });
});

describe('scopeAllows', () => {
  it.each([
    ['*', { kind: 'engine' }, true],
    ['*', { kind: 'proxy', port: 3000 }, true],
    ['*', { kind: 'control' }, true],
    ['engine', { kind: 'engine' }, true],
    ['engine', { kind: 'control' }, true],
    ['engine', { kind: 'proxy', port: 3000 }, false],
    ['proxy', { kind: 'proxy', port: 3000 }, true],
    ['proxy', { kind: 'engine' }, false],
    ['proxy', { kind: 'control' }, false],
    ['proxy:3000', { kind: 'proxy', port: 3000 }, true],
    ['proxy:3000', { kind: 'proxy', port: 3001 }, false],
  ] as const)('%s on %j -> %s', (scope, target, allowed) => {
    expect(scopeAllows(scope, target as ContextTarget)).toBe(allowed);
  });
});

describe('NonceCache', () => {
  it('forgets a nonce once its header can no longer be valid', () => {
    const cache = new NonceCache();
    expect(cache.claim('n', NOW + 60, NOW)).toBe(true);
    expect(cache.claim('n', NOW + 60, NOW + 89)).toBe(false);
    expect(cache.claim('other', NOW + 200, NOW + 91)).toBe(true);
    expect(cache.size).toBe(1);
  });
});
