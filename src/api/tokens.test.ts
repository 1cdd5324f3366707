import { describe, expect, it } from 'vitest';
import {
  adminGrant, hashToken, LAST_USED_ANNOTATION, lookupName, mintToken, principalFromSecret, secretTokenVerifier, TOKEN_LABEL, TOKEN_NAME_LABEL,
  tokenInfo, tokenSecret, type StoredSecret,
} from './tokens.js';

const USER = '33333333-3333-4333-8333-333333333333';
const PROJECT = '11111111-1111-4111-8111-111111111111';

describe('tokens', () => {
  it('mints a token whose Secret holds only its hash', () => {
    const { token, secret } = mintToken({ userId: USER, access: 'read', projectUid: PROJECT, capabilities: ['project.gitops.push'] }, 'svc-system');
    expect(token).toMatch(/^svc_[A-Za-z0-9_-]{43}$/);
    expect(JSON.stringify(secret)).not.toContain(token);
    expect(JSON.stringify(secret)).not.toContain(Buffer.from(token).toString('base64'));
    expect(secret.metadata).toEqual({ name: lookupName(token), namespace: 'svc-system', labels: { [TOKEN_LABEL]: 'true' } });
    expect(Buffer.from(secret.data.sha256!, 'base64').toString()).toBe(hashToken(token));
    const principal = principalFromSecret(token, secret);
    expect(principal).toEqual({
      tokenName: secret.metadata.name, userId: USER, access: 'read', projectUid: PROJECT, capabilities: new Set(['project.gitops.push']), expiresAt: null,
    });
  });

  it('gives the admin grant write, no scope and every capability', () => {
    const { token, secret } = mintToken(adminGrant(USER), 'default');
    expect(principalFromSecret(token, secret)).toMatchObject({ access: 'write', projectUid: null, capabilities: '*' });
  });

  it('refuses a token that does not match the Secret, or a Secret without the label', () => {
    const { token, secret } = mintToken(adminGrant(USER), 'default');
    const other = mintToken(adminGrant(USER), 'default');
    expect(principalFromSecret(other.token, secret)).toBeNull();
    expect(principalFromSecret(token, { ...secret, metadata: { ...secret.metadata, labels: {} } })).toBeNull();
    expect(principalFromSecret(token, { ...secret, data: { ...secret.data, access: Buffer.from('admin').toString('base64') } })).toBeNull();
    expect(principalFromSecret(token, null)).toBeNull();
  });

  it('rejects a grant whose user id is not a UUID', () => {
    expect(() => tokenSecret('svc_x', { userId: 'bob', access: 'read', capabilities: [] }, 'ns')).toThrow(/UUID/);
  });

  it('verifies through one Secret read by name, and never reads for a foreign token format', async () => {
    const { token, secret } = mintToken(adminGrant(USER), 'default');
    const reads: string[] = [];
    const verify = secretTokenVerifier(async (name) => { reads.push(name); return name === secret.metadata.name ? secret : null; });
    expect(await verify(token)).toMatchObject({ userId: USER });
    expect(await verify('svc_unknown')).toBeNull();
    expect(await verify('not-ours')).toBeNull();
    expect(reads).toEqual([secret.metadata.name, lookupName('svc_unknown')]);
  });

  it('names a token (data and label) and refuses it from its expiry on', () => {
    const expiresAt = '2030-01-01T00:00:00.000Z';
    const { token, secret } = mintToken({ ...adminGrant(USER), name: 'ci-bot', expiresAt, createdBy: USER }, 'default');
    expect(secret.metadata.labels).toEqual({ [TOKEN_LABEL]: 'true', [TOKEN_NAME_LABEL]: 'ci-bot' });
    expect(tokenInfo(secret)).toMatchObject({ name: 'ci-bot', secretName: secret.metadata.name, expiresAt, createdBy: USER, lastUsedAt: null });
    expect(principalFromSecret(token, secret, new Date('2029-12-31T23:59:59Z'))).toMatchObject({ expiresAt });
    expect(principalFromSecret(token, secret, new Date(expiresAt))).toBeNull();
    expect(() => mintToken({ ...adminGrant(USER), name: 'Bad Name' }, 'default')).toThrow(/lower-case/);
  });

  it('tells the holder of an expired token that it expired, and never an impostor', async () => {
    const expiresAt = '2030-01-01T00:00:00.000Z';
    const { token, secret } = mintToken({ ...adminGrant(USER), name: 'ci-bot', expiresAt }, 'default');
    const touched: string[] = [];
    const verify = secretTokenVerifier(async () => secret, { now: () => new Date(expiresAt), touch: async (name) => { touched.push(name); } });
    expect(await verify(token)).toEqual({ refused: 'token ci-bot expired at 2030-01-01T00:00:00.000Z: a cluster admin makes a new one with `svc tokens create`' });
    // the same Secret read for a token with the same lookup name but another value: not known
    const impostor = secretTokenVerifier(async () => secret, { now: () => new Date(expiresAt) });
    expect(await impostor(mintToken(adminGrant(USER), 'default').token)).toBeNull();
    expect(touched).toEqual([]);
  });

  it('records the last use at most once a minute', async () => {
    const { token, secret } = mintToken(adminGrant(USER), 'default');
    const touched: string[] = [];
    let clock = new Date('2026-01-01T00:00:00Z');
    const stored: StoredSecret = secret;
    const verify = secretTokenVerifier(async () => stored, {
      now: () => clock,
      touch: async (_name, at) => { touched.push(at); stored.metadata!.annotations = { [LAST_USED_ANNOTATION]: at }; },
    });
    await verify(token);
    clock = new Date('2026-01-01T00:00:30Z');
    await verify(token);
    clock = new Date('2026-01-01T00:01:00Z');
    await verify(token);
    expect(touched).toEqual(['2026-01-01T00:00:00.000Z', '2026-01-01T00:01:00.000Z']);
  });

  describe("a session's CLI token (label svc.dev/session)", () => {
    const SESSION = '44444444-4444-4444-8444-444444444444';
    const minted = () => {
      const { token, secret } = mintToken({ userId: USER, access: 'write', projectUid: PROJECT, capabilities: ['project.gitops.push'] }, 'default');
      const labelled: StoredSecret = { ...secret, metadata: { ...secret.metadata, labels: { ...secret.metadata.labels, 'svc.dev/session': SESSION } } };
      return { token, secret: labelled };
    };

    it('knows its session', () => {
      const { token, secret } = minted();
      expect(principalFromSecret(token, secret)).toMatchObject({ sessionId: SESSION });
      expect(tokenInfo(secret)).toMatchObject({ sessionId: SESSION });
    });

    it('is asked about at every request, and refused when the check says no or there is no check', async () => {
      const { token, secret } = minted();
      let live = true;
      const asked: string[] = [];
      const verify = secretTokenVerifier(async () => secret, { sessionTokens: async (p, presented) => { asked.push(`${p.sessionId}:${presented === token}`); return live; } });
      expect(await verify(token)).toMatchObject({ sessionId: SESSION });
      live = false;
      expect(await verify(token)).toBeNull();
      expect(asked).toEqual([`${SESSION}:true`, `${SESSION}:true`]);
      expect(await secretTokenVerifier(async () => secret)(token)).toBeNull();
    });

    it("a person's token is never asked about", async () => {
      const { token, secret } = mintToken(adminGrant(USER), 'default');
      const verify = secretTokenVerifier(async () => secret, { sessionTokens: async () => { throw new Error('asked'); } });
      expect(await verify(token)).toMatchObject({ userId: USER });
      expect(await verify(token)).not.toHaveProperty('sessionId');
    });
  });
});
