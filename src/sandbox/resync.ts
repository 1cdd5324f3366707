// How often the Session and Sandbox controllers look at a sandbox without being told: the slow
// safety net under svc-agent's state events (docs/sessions.md "Events, not polling"). An event
// wakes both at once; these catch what no event says (a daemon that died, an event lost).
export interface SandboxResync {
  /** While the sandbox starts (the operator's SVC_SANDBOX_RESYNC_PROVISIONING_SECONDS). */
  provisioningMs: number;
  /** While it runs (SVC_SANDBOX_RESYNC_RUNNING_SECONDS). */
  runningMs: number;
}

export const DEFAULT_SANDBOX_RESYNC: SandboxResync = { provisioningMs: 5_000, runningMs: 60_000 };
