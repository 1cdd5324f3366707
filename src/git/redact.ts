// Keeps credentials out of every message the engine produces.

const USERINFO = /([a-z][a-z0-9+.-]*:\/\/)[^/@\s]*@/gi;

/** Replaces `scheme://user:pass@` with `scheme://***@` and every given secret value with `***`. */
export function redact(text: string, secrets: readonly string[] = []): string {
  let out = text.replace(USERINFO, '$1***@');
  for (const secret of secrets) {
    if (secret.length > 0) out = out.split(secret).join('***');
  }
  return out;
}
