// What went wrong in an engine's run, in one wording for whoever reads it: "cannot reach the model"
// (svc-agent's health `engine.model_error`, `svc sessions logs` of opencode's `session.status`
// events) and an error the engine ended a turn with (health `engine.turn_error`, `svc sessions
// logs` and the dashboard's event log of opencode's `session.error` events).

/** "cannot reach the model: <error> (attempt N)" while a run is opencode's `retry`, else null. */
export function modelError(run: unknown): string | null {
  if (!run || typeof run !== 'object' || (run as { type?: unknown }).type !== 'retry') return null;
  const message = (run as { message?: unknown }).message;
  const attempt = (run as { attempt?: unknown }).attempt;
  return `cannot reach the model: ${typeof message === 'string' && message ? message : 'no message'}${typeof attempt === 'number' ? ` (attempt ${attempt})` : ''}`;
}

/**
 * An engine's error (opencode's `{ name, data: { message } }`) in one line: "Name: message", the
 * message's first line (opencode sends some again with their stack); without its generic name
 * `UnknownError`. Null when it has neither.
 */
export function engineErrorText(error: unknown): string | null {
  const { name, data, message } = (error ?? {}) as { name?: unknown; data?: { message?: unknown }; message?: unknown };
  const text = typeof data?.message === 'string' ? data.message : typeof message === 'string' ? message : '';
  const line = text.trim().split('\n', 1)[0]!.trim();
  const label = typeof name === 'string' && name && name !== 'UnknownError' ? name : '';
  return [label, line].filter(Boolean).join(': ') || null;
}
