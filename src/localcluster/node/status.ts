// The Pod status a kubelet would write, computed from what the simulated node knows of each
// container. Pure: `now` is given, earlier conditions keep their transition times.

export type ContainerState =
  | { waiting: { reason: string; message?: string } }
  | { running: { startedAt: string } }
  | { terminated: Terminated };

export interface Terminated {
  exitCode: number;
  signal?: number;
  reason: string;
  message?: string;
  startedAt?: string;
  finishedAt: string;
  containerID?: string;
}

export interface ContainerView {
  name: string;
  image: string;
  state: ContainerState;
  lastTerminated?: Terminated;
  restartCount: number;
  ready: boolean;
  containerID?: string;
}

export interface PodCondition {
  type: string;
  status: 'True' | 'False';
  lastProbeTime: null;
  lastTransitionTime: string;
  reason?: string;
  message?: string;
}

export interface PodStatusInput {
  podIP?: string;
  hostIP: string;
  startTime: string;
  containers: ContainerView[];
  /** spec.restartPolicy */
  restartPolicy?: string;
  previousConditions?: PodCondition[];
  now: string;
}

export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed';

/** The kubelet's phase rules for pods without init containers. */
export function podPhase(containers: ContainerView[], restartPolicy = 'Always'): PodPhase {
  let pending = 0, running = 0, failed = 0;
  for (const c of containers) {
    // a container waiting to be restarted still counts as running
    if ('running' in c.state || ('waiting' in c.state && c.lastTerminated)) running++;
    else if ('waiting' in c.state) pending++;
    else if (c.state.terminated.exitCode !== 0) failed++;
  }
  if (pending > 0) return 'Pending';
  if (running > 0) return 'Running';
  // every container terminated: with Always the kubelet restarts them, so the pod still runs
  if (restartPolicy === 'Always') return 'Running';
  if (restartPolicy === 'OnFailure' && failed > 0) return 'Running';
  return failed > 0 ? 'Failed' : 'Succeeded';
}

function condition(type: string, ok: boolean, now: string, previous: PodCondition[] | undefined, reason?: string, message?: string): PodCondition {
  const before = previous?.find((c) => c.type === type);
  const status = ok ? 'True' : 'False';
  const lastTransitionTime = before && before.status === status ? before.lastTransitionTime : now;
  return { type, status, lastProbeTime: null, lastTransitionTime, ...(reason ? { reason } : {}), ...(message ? { message } : {}) };
}

export function podStatus(input: PodStatusInput): Record<string, unknown> {
  const { containers, now } = input;
  const phase = podPhase(containers, input.restartPolicy);
  const notReady = containers.filter((c) => !c.ready).map((c) => c.name);
  const allReady = notReady.length === 0 && phase === 'Running';
  const readyMessage = notReady.length ? `containers with unready status: [${notReady.join(' ')}]` : undefined;
  const reason = allReady ? undefined : phase === 'Succeeded' || phase === 'Failed' ? 'PodCompleted' : 'ContainersNotReady';
  const previous = input.previousConditions;
  return {
    phase,
    conditions: [
      condition('PodScheduled', true, now, previous),
      condition('Initialized', true, now, previous),
      condition('ContainersReady', allReady, now, previous, reason, readyMessage),
      condition('Ready', allReady, now, previous, reason, readyMessage),
    ],
    hostIP: input.hostIP,
    hostIPs: [{ ip: input.hostIP }],
    ...(input.podIP ? { podIP: input.podIP, podIPs: [{ ip: input.podIP }] } : {}),
    startTime: input.startTime,
    qosClass: 'BestEffort',
    containerStatuses: containers.map((c) => ({
      name: c.name,
      image: c.image,
      imageID: '',
      ...(c.containerID ? { containerID: c.containerID } : {}),
      ready: c.ready,
      started: 'running' in c.state,
      restartCount: c.restartCount,
      state: c.state,
      lastState: c.lastTerminated ? { terminated: c.lastTerminated } : {},
    })),
  };
}

/** What a process exit looks like to the kubelet (128 + signal number for a signal). */
export function terminatedFromExit(code: number | null, signal: NodeJS.Signals | null, startedAt: string, finishedAt: string, containerID: string): Terminated {
  const signalNumbers: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGABRT: 6, SIGKILL: 9, SIGSEGV: 11, SIGPIPE: 13, SIGTERM: 15 };
  const signalNumber = signal ? signalNumbers[signal] ?? 1 : undefined;
  const exitCode = code ?? 128 + (signalNumber ?? 1);
  return {
    exitCode,
    ...(signalNumber !== undefined ? { signal: signalNumber } : {}),
    reason: exitCode === 0 ? 'Completed' : 'Error',
    startedAt,
    finishedAt,
    containerID,
  };
}
