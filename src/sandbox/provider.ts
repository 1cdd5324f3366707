// The sandbox provider interface (DESIGN.md §2): one method set for the `process` provider
// (svc-agent as a local child process, the embedded default of `svc dev`) and the `kubernetes`
// provider (a Pod plus a per-sandbox Secret). The Sandbox controller owns the lifecycle and the
// status; a provider only makes the world match a request and reports what it sees. Engine
// readiness and activity are read by the controller from the daemon's GET /svc/health at
// `address`, the same way for every provider.
import type { KubeObject, ResourceType, SandboxTemplate } from '../resources/index.js';

/** Which sandbox, and who owns what the provider creates (the Sandbox resource). */
export interface SandboxRef {
  namespace: string;
  /** The Sandbox's name: the session id. */
  name: string;
  /** The Sandbox's metadata.uid: owner of whatever the provider creates in the cluster. */
  uid: string;
}

/** Everything a provider needs to start one sandbox. */
export interface SandboxRequest extends SandboxRef {
  sessionId: string;
  projectId: string;
  /** Image, resources and entrypoint (project defaults refined by the manifest template). */
  template: SandboxTemplate;
  /** SPEC §2.6 variables that are not secret (ids, branch, repo URL, API URL, agent, ...). */
  env: Record<string, string>;
  /**
   * Tokens (SVC_SANDBOX_TOKEN, SVC_TOKEN, SVC_CLI_TOKEN, SVC_EXECUTOR_TOKEN) and the project's
   * secrets. A provider keeps them out of resource specs, argv and logs (a Secret reference
   * for a Pod, the child's environment for a process).
   */
  secretEnv: Record<string, string>;
}

export type ObservedSandboxState = 'absent' | 'provisioning' | 'running' | 'failed';

/** What a provider sees of one sandbox. */
export interface SandboxObservation {
  state: ObservedSandboxState;
  /** host:port where the daemon (SPEC §4.5) answers, once known. */
  address?: string;
  /** Machine-readable cause when failed or absent-after-running (e.g. ImagePullBackOff, Exited). */
  reason?: string;
  /** What a person can act on; never a secret. */
  message?: string;
  /** Provider detail shown in status (a pod name, a pid). */
  detail?: { podName?: string; pid?: number };
}

/** Reads of the controller's cache of a kind a provider `owns` (kept by a watch: stale only until its next event). */
export type OwnedCache = (type: ResourceType) => { get(namespace: string, name: string): KubeObject | undefined };

export interface SandboxProvider {
  readonly name: 'process' | 'kubernetes';
  /**
   * Kinds of cluster objects the provider makes for a sandbox, each with its Sandbox as controller
   * owner: the Sandbox controller watches them (controller-runtime's Owns), so that a change to one
   * (a Pod deleted from outside) is looked at at once, not at the next resync.
   */
  readonly owns?: ResourceType[];
  /** Creates the sandbox when absent; idempotent. Resolves with what it then sees. */
  ensure(request: SandboxRequest, signal?: AbortSignal): Promise<SandboxObservation>;
  /**
   * What exists now for the sandbox (also after an operator restart). `cached`: the controller's
   * caches of the kinds in `owns`, which a provider may read instead of the cluster.
   */
  observe(ref: SandboxRef, signal?: AbortSignal, cached?: OwnedCache): Promise<SandboxObservation>;
  /** Removes the sandbox and everything the provider made for it; idempotent. */
  delete(ref: SandboxRef, signal?: AbortSignal): Promise<void>;
  /**
   * The end of the sandbox's output (svc-agent's and its engine's), at most `maxBytes`, as it is
   * now; null when there is none (nothing was started, or it is removed already). Read before
   * `delete` to keep a failed sandbox's log (docs/sessions.md).
   */
  logTail(ref: SandboxRef, maxBytes: number, signal?: AbortSignal): Promise<string | null>;
  /**
   * Calls `listener` when a sandbox this provider started ends (for whatever reason), so that
   * its controller looks at once rather than at its next resync; returns how to stop listening.
   * Optional: a provider without it is looked at on the resync only.
   */
  onExit?(listener: (ref: SandboxRef) => void): () => void;
}
