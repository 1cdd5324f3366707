import { describe, expect, it } from 'vitest';
import { adminGrant, hashToken, lookupName, mintToken, principalFromSecret, secretTokenVerifier, TOKEN_LABEL, tokenSecret } from './tokens.js';

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
      tokenName: secret.metadata.name, userId: USER, access: 'read', projectUid: PROJECT, capabilities: new Set(['project.gitops.push']),
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
});
