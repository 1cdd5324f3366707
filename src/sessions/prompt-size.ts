// How large a prompt a session takes. The first prompt reaches svc-agent in its environment
// (SVC_INITIAL_PROMPT), where Linux refuses one string past 128 KiB (E2BIG: the sandbox would not
// start), and follow-ups wait in an annotation Kubernetes caps at 256 KiB.

/** The largest prompt: the REST routes refuse a larger one (400), a fire's rendered prompt is cut to it. */
export const MAX_PROMPT_BYTES = 64 * 1024;

/**
 * `text` when it fits MAX_PROMPT_BYTES, else its start (cut between characters) and a line saying
 * so: a webhook payload rendered into a trigger's prompt can be as large as the payload.
 */
export function boundPrompt(text: string, wholeBytes?: number): string {
  const bytes = Buffer.from(text, 'utf8');
  // `text` may be the start of a longer prompt (renderPrefix): `wholeBytes` is the size of the whole
  const whole = wholeBytes ?? bytes.length;
  if (whole <= MAX_PROMPT_BYTES) return text;
  const note = `\n\n[svc: this prompt was cut to ${MAX_PROMPT_BYTES} bytes; it had ${whole}]`;
  let end = MAX_PROMPT_BYTES - Buffer.byteLength(note);
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--; // not inside a character
  return bytes.subarray(0, end).toString('utf8') + note;
}
