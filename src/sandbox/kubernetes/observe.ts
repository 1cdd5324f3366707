// What a sandbox Pod's status means for the Sandbox (pure; `now` injected). The controller
// reads the engine's readiness from the daemon's /svc/health at `address`, as for every
// provider; this mapping says whether there is a daemon to ask, and why not.
import type { KubeObject } from '../../resources/index.js';
import type { SandboxObservation } from '../provider.js';
import { DAEMON_PORT } from './pod-spec.js';

interface Terminated { exitCode?: number; signal?: number; reason?: string; message?: string }
interface ContainerStatus {
  name: string;
  ready?: boolean;
  restartCount?: number;
  state?: { waiting?: { reason?: string; message?: string }; running?: object; terminated?: Terminated };
  lastState?: { terminated?: Terminated };
}
export interface PodStatusView {
  phase?: string;
  reason?: string;
  message?: string;
  podIP?: string;
  conditions?: { type: string; status: string; reason?: string; message?: string }[];
  containerStatuses?: ContainerStatus[];
}

export interface ObserveInput {
  /** The sandbox Pod, when it exists (and belongs to this Sandbox). */
  pod: KubeObject | undefined;
  /** The sandbox Secret exists: a missing Pod was then deleted from under us. */
  secretExists: boolean;
  now: Date;
  provisioningDeadlineMs: number;
  maxRestarts: number;
}

/** Waiting reasons that do not go away by waiting. */
const FATAL_WAITING = new Set(['ErrImagePull', 'ImagePullBackOff', 'InvalidImageName', 'ErrImageNeverPull', 'CreateContainerConfigError', 'CreateContainerError', 'RunContainerError', 'CrashLoopBackOff']);

function describeExit(t: Terminated): string {
  const how = t.signal ? `signal ${t.signal}` : `exit code ${t.exitCode ?? '?'}`;
  return `${t.reason ?? 'Error'} (${how})${t.message ? `: ${t.message.trim().slice(0, 300)}` : ''}`;
}

function seconds(ms: number): string {
  return ms % 60_000 === 0 ? `${ms / 60_000}m` : `${Math.round(ms / 1000)}s`;
}

export function observePod(input: ObserveInput): SandboxObservation {
  const { pod } = input;
  if (!pod) {
    return input.secretExists
      ? { state: 'failed', reason: 'PodDeleted', message: 'the sandbox pod was deleted while the sandbox was running' }
      : { state: 'absent' };
  }
  const podName = pod.metadata.name;
  const detail = { podName };
  const status = (pod.status ?? {}) as PodStatusView;
  const failed = (reason: string, message: string): SandboxObservation => ({ state: 'failed', reason, message: `pod ${podName}: ${message}`, detail });
  if (pod.metadata.deletionTimestamp) return failed('PodDeleted', 'the pod is being deleted');
  const container = status.containerStatuses?.[0];
  const last = container?.lastState?.terminated;
  const current = container?.state?.terminated;
  if (status.phase === 'Failed') {
    // evicted (node pressure, ephemeral-storage over its limit) or a container that stopped for good
    const exit = current ?? last;
    return failed(status.reason ?? exit?.reason ?? 'PodFailed', status.message ?? (exit ? describeExit(exit) : 'the pod failed'));
  }
  if (status.phase === 'Succeeded') return failed('Completed', current ? `the sandbox exited: ${describeExit(current)}` : 'the sandbox exited');
  if (current?.reason === 'OOMKilled' || last?.reason === 'OOMKilled') {
    return failed('OOMKilled', 'the sandbox ran out of memory (OOMKilled); give its template more memory');
  }
  const waiting = container?.state?.waiting;
  if (waiting?.reason && FATAL_WAITING.has(waiting.reason)) {
    const cause = waiting.reason === 'CrashLoopBackOff' && last ? `the sandbox keeps exiting: ${describeExit(last)}` : waiting.message ?? waiting.reason;
    return failed(waiting.reason, cause);
  }
  if ((container?.restartCount ?? 0) > input.maxRestarts) {
    return failed('TooManyRestarts', `the sandbox restarted ${container!.restartCount} times${last ? `; last: ${describeExit(last)}` : ''}`);
  }
  const address = status.podIP ? `${status.podIP}:${DAEMON_PORT}` : undefined;
  if (status.phase === 'Running' && container?.state?.running && address) return { state: 'running', address, detail };
  const created = Date.parse(pod.metadata.creationTimestamp ?? '');
  if (Number.isFinite(created) && input.now.getTime() - created > input.provisioningDeadlineMs) {
    const scheduled = status.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False');
    const why = waiting?.message ?? waiting?.reason ?? scheduled?.message ?? scheduled?.reason ?? `phase ${status.phase ?? 'Pending'}`;
    return failed('ProvisioningTimeout', `not running after ${seconds(input.provisioningDeadlineMs)}: ${why}`);
  }
  return { state: 'provisioning', ...(address ? { address } : {}), ...(waiting?.reason ? { reason: waiting.reason, message: waiting.message ?? waiting.reason } : {}), detail };
}
