// The sandbox's secret values (tokens, project secrets) taken out of a text before it leaves:
// what svc-agent's health answers and what a failed session's kept log shows (docs/sessions.md).
import { redactUrls } from './redact-url.js';

/** Shorter values would garble the text and are no secret worth the name. */
export const MIN_SECRET_LENGTH = 6;

/** `text` with URL credentials and every given secret value (6 characters or longer) replaced by `***`. */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let out = redactUrls(text);
  for (const secret of secrets) if (secret.length >= MIN_SECRET_LENGTH) out = out.split(secret).join('***');
  return out;
}
