import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { authenticateWebhook, signWebhookBody } from './webhook-auth.js';

const secret = 's3cret-value';
const body = Buffer.from('{"ref":"refs/heads/main"}');
const hex = createHmac('sha256', secret).update(body).digest('hex');
const wrongHex = createHmac('sha256', 'other').update(body).digest('hex');
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('authenticateWebhook', () => {
  it.each<[string, Record<string, string>, false | 'signature' | 'token']>([
    ['X-Svc-Signature with sha256= prefix', { 'x-svc-signature': `sha256=${hex}` }, 'signature'],
    ['X-Svc-Signature without prefix', { 'x-svc-signature': hex }, 'signature'],
    ['X-Svc-Signature upper-case hex', { 'x-svc-signature': `sha256=${hex.toUpperCase()}` }, 'signature'],
    ['X-Svc-Signature mixed-case hex', { 'x-svc-signature': hex.slice(0, 32).toUpperCase() + hex.slice(32) }, 'signature'],
    ['X-Hub-Signature-256', { 'x-hub-signature-256': `sha256=${hex}` }, 'signature'],
    ['X-Hub-Signature-256 without prefix', { 'x-hub-signature-256': hex }, 'signature'],
    ['both signature headers, both good', { 'x-svc-signature': hex, 'x-hub-signature-256': `sha256=${hex}` }, 'signature'],
    ['both signature headers, one bad', { 'x-svc-signature': hex, 'x-hub-signature-256': `sha256=${wrongHex}` }, false],
    ['wrong signature', { 'x-svc-signature': `sha256=${wrongHex}` }, false],
    ['63 hex characters', { 'x-svc-signature': hex.slice(0, 63) }, false],
    ['65 hex characters', { 'x-svc-signature': `${hex}0` }, false],
    ['non-hex character', { 'x-svc-signature': `${hex.slice(0, 63)}g` }, false],
    ['other algorithm prefix', { 'x-svc-signature': `sha1=${hex}` }, false],
    ['empty signature', { 'x-svc-signature': '' }, false],
    ['signature of another body', { 'x-svc-signature': signWebhookBody('{}', secret) }, false],
    ['bad signature with a good X-Svc-Token', { 'x-svc-signature': wrongHex, 'x-svc-token': secret }, false],
    ['bad signature with a good Bearer', { 'x-hub-signature-256': wrongHex, authorization: `Bearer ${secret}` }, false],
    ['X-Svc-Token', { 'x-svc-token': secret }, 'token'],
    ['X-Svc-Token wrong', { 'x-svc-token': `${secret}x` }, false],
    ['X-Svc-Token prefix of the secret', { 'x-svc-token': secret.slice(0, 4) }, false],
    ['Bearer', { authorization: `Bearer ${secret}` }, 'token'],
    ['bearer lower-case scheme', { authorization: `bearer ${secret}` }, 'token'],
    ['Bearer wrong', { authorization: 'Bearer nope' }, false],
    ['Basic, password half', { authorization: basic('github', secret) }, 'token'],
    ['Basic, empty user', { authorization: basic('', secret) }, 'token'],
    ['Basic, password with a colon', { authorization: basic('u', `a:${secret}`) }, false],
    ['Basic, secret as the user half', { authorization: basic(secret, 'x') }, false],
    ['Basic without a colon', { authorization: `Basic ${Buffer.from(secret).toString('base64')}` }, false],
    ['unknown scheme', { authorization: `Token ${secret}` }, false],
    ['nothing', {}, false],
  ])('%s', (_name, headers, expected) => {
    const result = authenticateWebhook(headers, body, secret);
    expect(result.ok ? result.method : false).toBe(expected);
  });

  it('signs and checks the raw bytes, not a re-serialization', () => {
    const raw = Buffer.from('{ "a" : 1 }');
    expect(authenticateWebhook({ 'x-svc-signature': signWebhookBody(raw, secret) }, raw, secret).ok).toBe(true);
    expect(authenticateWebhook({ 'x-svc-signature': signWebhookBody('{"a":1}', secret) }, raw, secret).ok).toBe(false);
  });

  it('a password with a colon is the part after the first colon', () => {
    expect(authenticateWebhook({ authorization: basic('u', 'a:b') }, body, 'a:b').ok).toBe(true);
  });
});
