// The daemon's GET /svc/health (SPEC §4.5, docs/daemon.md): how every provider's sandbox tells
// whether its engine is ready, busy or failed, and when it was last active. No authentication.

export interface DaemonHealth {
  status: 'ok' | 'starting' | 'failed';
  daemon: { state: 'starting' | 'cloning' | 'restoring' | 'ready' | 'failed'; error: string | null; pid?: number; started_at?: string };
  engine: {
    state: 'stopped' | 'booting' | 'ready' | 'restarting' | 'failed';
    restarts: number;
    last_error: string | null;
    root_session_id: string | null;
    initial_prompt_sent_at: string | null;
    run: { type: 'idle' | 'busy' | 'retry'; attempt?: number; message?: string } | null;
  };
  repository?: { url: string | null; branch: string | null; commit: string | null };
  /** the session's checkpoint (DESIGN §8.3, docs/daemon.md); absent from daemons older than it */
  checkpoint?: DaemonCheckpoint;
  /** the engine's progress (docs/daemon.md "Progress"); absent from daemons older than it */
  progress?: DaemonProgress;
  last_activity_at: string | null;
}

export interface DaemonCheckpoint {
  enabled: boolean;
  ref: string;
  /** the latest checkpoint the sandbox knows (what Session status `checkpoint: { sha, at }` shows) */
  sha: string | null;
  at: string | null;
  /** restored on boot (Event CheckpointRestored) */
  restored: { sha: string; at: string } | null;
  /** found on boot and left alone (Event CheckpointSkipped with the reason) */
  skipped: { sha: string | null; reason: string } | null;
  conversation: { restored: { sha: string; session_id: string; messages: number } | null; error: string | null };
  writes: number;
  last_error: { at: string; message: string } | null;
}

export interface DaemonProgress {
  /** stalled from the moment the daemon found the engine stuck until the restarted engine is ready */
  state: 'ok' | 'stalled';
  reason: string | null;
  since: string;
  busy: boolean;
  last_event_at: string | null;
  /** stalls found since the daemon started: a new one is a new Event */
  stalls: number;
  last_stall: { at: string; reason: string } | null;
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
