// Webhook authentication (SPEC §5.4), on the raw body bytes before any parsing. A signature
// header wins: when one is present, token headers are ignored. Every comparison is constant time.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export type Headers = Record<string, string | string[] | undefined>;

const SIGNATURE_HEADERS = ['x-svc-signature', 'x-hub-signature-256'] as const;
const SIGNATURE = /^(?:sha256=)?([0-9a-fA-F]{64})$/;

function single(headers: Headers, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

export type WebhookAuthMethod = 'signature' | 'token';
export type WebhookAuthResult = { ok: true; method: WebhookAuthMethod } | { ok: false };

function signatureMatches(value: string, rawBody: Buffer, secret: string): boolean {
  const hex = SIGNATURE.exec(value.trim())?.[1];
  // Computed even for a malformed value, so that a bad header costs as much as a good one.
  const expected = createHmac('sha256', secret).update(rawBody).digest();
  if (!hex) return false;
  return timingSafeEqual(Buffer.from(hex.toLowerCase(), 'hex'), expected);
}

/** Constant time also across lengths: the digests compared always have 32 bytes. */
function tokensEqual(a: string, b: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(a), digest(b));
}

/** The token of the static-token fallback: X-Svc-Token, Bearer, or the password half of Basic. */
export function presentedToken(headers: Headers): string | undefined {
  const token = single(headers, 'x-svc-token');
  if (token !== undefined) return token;
  const authorization = single(headers, 'authorization')?.trim();
  if (!authorization) return undefined;
  const bearer = /^Bearer +(.+)$/i.exec(authorization);
  if (bearer) return bearer[1]!.trim();
  const basic = /^Basic +([A-Za-z0-9+/=_-]+)$/i.exec(authorization);
  if (basic) {
    const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    return colon < 0 ? undefined : decoded.slice(colon + 1);
  }
  return undefined;
}

export function authenticateWebhook(headers: Headers, rawBody: Buffer, secret: string): WebhookAuthResult {
  const signatures = SIGNATURE_HEADERS.map((name) => single(headers, name)).filter((v): v is string => v !== undefined);
  if (signatures.length) {
    // Both headers sent: each must match (a sender cannot smuggle a bad one next to a good one).
    return signatures.every((value) => signatureMatches(value, rawBody, secret)) ? { ok: true, method: 'signature' } : { ok: false };
  }
  const token = presentedToken(headers);
  if (token === undefined || secret === '') return { ok: false };
  return tokensEqual(token, secret) ? { ok: true, method: 'token' } : { ok: false };
}

/** `sha256=<hex>` of `body` with `secret`: what a sender puts in X-Svc-Signature. */
export function signWebhookBody(body: Buffer | string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}
