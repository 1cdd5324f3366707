// How long stopping a sandbox may take, shared by svc-agent (its SIGTERM sequence) and the
// providers (how long they wait before SIGKILL): first a checkpoint of the working tree and the
// conversation (docs/sessions.md), then the engine and every process of the sandbox get
// SIGTERM, then SIGKILL.

/** svc-agent: the checkpoint on SIGTERM may take this long (SVC_CHECKPOINT_STOP_TIMEOUT_MS). */
export const STOP_CHECKPOINT_TIMEOUT_MS = 20_000;
/** svc-agent: after the checkpoint, the engine and the sandbox's processes get this long before SIGKILL (SVC_STOP_GRACE_MS). */
export const STOP_GRACE_MS = 10_000;
/** What a provider waits for svc-agent to exit after SIGTERM before it kills what is left. */
export const SANDBOX_STOP_GRACE_MS = STOP_CHECKPOINT_TIMEOUT_MS + STOP_GRACE_MS + 5_000;

/** svc-agent settings of checkpoints, the stop and the progress watchdog an operator passes on when set (docs/daemon.md). */
export const CHECKPOINT_AND_PROGRESS_TUNABLES = [
  'SVC_CHECKPOINT_INTERVAL_MS', 'SVC_CHECKPOINT_STOP_TIMEOUT_MS', 'SVC_STOP_GRACE_MS',
  'SVC_ENGINE_PROGRESS_TIMEOUT_MS', 'SVC_ENGINE_HEALTH_INTERVAL_MS', 'SVC_ENGINE_HEALTH_TIMEOUT_MS', 'SVC_ENGINE_HEALTH_FAILURES',
] as const;
