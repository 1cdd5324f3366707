// "cannot reach the model" in one wording for whoever reads an engine's run: svc-agent's health
// (`engine.model_error`) and `svc sessions logs` (opencode's `session.status` events).

/** "cannot reach the model: <error> (attempt N)" while a run is opencode's `retry`, else null. */
export function modelError(run: unknown): string | null {
  if (!run || typeof run !== 'object' || (run as { type?: unknown }).type !== 'retry') return null;
  const message = (run as { message?: unknown }).message;
  const attempt = (run as { attempt?: unknown }).attempt;
  return `cannot reach the model: ${typeof message === 'string' && message ? message : 'no message'}${typeof attempt === 'number' ? ` (attempt ${attempt})` : ''}`;
}
