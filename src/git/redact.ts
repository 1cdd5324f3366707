// Keeps credentials out of every message the engine produces.
import { redactUrls } from '../lib/redact-url.js';

/** Redacts URL credentials (userinfo, credential-like query parameters) and every given secret value. */
export function redact(text: string, secrets: readonly string[] = []): string {
  let out = redactUrls(text);
  for (const secret of secrets) {
    if (secret.length > 0) out = out.split(secret).join('***');
  }
  return out;
}
