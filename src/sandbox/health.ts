// The daemon's GET /svc/health (SPEC §4.5, docs/daemon.md): how every provider's sandbox tells
// whether its engine is ready, busy or failed, and when it was last active. No authentication.

export interface DaemonHealth {
  status: 'ok' | 'starting' | 'failed';
  daemon: { state: 'starting' | 'cloning' | 'ready' | 'failed'; error: string | null; pid?: number; started_at?: string };
  engine: {
    state: 'stopped' | 'booting' | 'ready' | 'restarting' | 'failed';
    restarts: number;
    last_error: string | null;
    root_session_id: string | null;
    initial_prompt_sent_at: string | null;
    run: { type: 'idle' | 'busy' | 'retry'; attempt?: number; message?: string } | null;
  };
  repository?: { url: string | null; branch: string | null; commit: string | null };
  last_activity_at: string | null;
}

/** A run in progress (busy, or retrying a model call): the session is never idle then. */
export function engineBusy(health: DaemonHealth): boolean {
  const type = health.engine.run?.type;
  return type === 'busy' || type === 'retry';
}

/**
 * Reads the daemon's health at `address` (host:port); null when it does not answer in time
 * (a probe sent just as the port opens can hang, so it always has a timeout).
 */
export async function readDaemonHealth(address: string, timeoutMs = 3000): Promise<DaemonHealth | null> {
  try {
    const res = await fetch(`http://${address}/svc/health`, { signal: AbortSignal.timeout(timeoutMs) });
    if (!res.ok) return null;
    return (await res.json()) as DaemonHealth;
  } catch {
    return null;
  }
}
