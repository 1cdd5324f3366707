// The node simulator (DESIGN.md §2): plays one node for the Pods a label selector picks, running
// each container as a local process on the pod's own loopback address, or, on an isolated node,
// jailed in the pod's own network namespace and address (src/lib/jail, as the `process` provider's
// sandboxes). A stand-in like kwok for tests and `svc dev --provider kubernetes`; README.md says
// what it does not do.
import { mkdir } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import type { ClusterAccess } from '../client.js';
import type { KObject } from '../status.js';
import { checkIsolation, describeProblems } from '../../lib/jail/check.js';
import type { Jail } from '../../lib/jail/index.js';
import { NodeApi, NodeApiError } from './api.js';
import type { Container, ImageConfig } from './container.js';
import { HollowAddresses, HollowHost, HollowPod, isHollowPod } from './hollow.js';
import { podDir } from './logs.js';
import { PodWorker, type PodPlacement } from './pod.js';

export type { ImageConfig } from './container.js';
export { podLogReader, type PodLogQuery } from './logs.js';

export interface NodeSimulatorOptions {
  /** The API server: its URL, the certificate to trust and the bearer token to send. */
  cluster: ClusterAccess;
  /** Pods this node runs (a label selector, e.g. `svc.dev/sandbox`). */
  labelSelector: string;
  /** Only this namespace (default: all). */
  namespace?: string;
  /** Pod working files: emptyDir volumes and container logs (`<first 12 hex digits of the pod uid>/`). */
  dataDir: string;
  /** What the node knows of an image (undefined: the pull fails with ErrImagePull). */
  images: (image: string) => ImageConfig | undefined;
  /** A command path inside the image -> the local command words that play it. */
  commands?: Record<string, string[]>;
  /**
   * Extra environment per pod. The processes share this machine's network (no network
   * namespaces): use it to give each pod's programs their own address and ports.
   */
  podEnv?: (pod: { namespace: string; name: string; ip: string }) => Promise<Record<string, string>> | Record<string, string>;
  /** Pod IPs are 127.0.0.N for N in this range (default 2..254); an address whose ports are taken is skipped. */
  addressRange?: [number, number];
  /**
   * Isolation (svc dev): every pod in a jail slot of `jail` (its address is the pod IP), each
   * container as its securityContext says; or `unavailable`: pods cannot start, saying why.
   * Absent: pods are plain local processes on 127.0.0.N (the chart tests' API and operator pods).
   */
  isolation?: { jail: Jail } | { unavailable: string };
  /** First restart back-off (kubelet: 10 s), doubled per restart up to maxRestartBackoffMs (300 s). */
  restartBackoffMs?: number;
  maxRestartBackoffMs?: number;
  /** Cap on the termination grace period (default 10 s). */
  killGraceMs?: number;
  /**
   * How often each pod's disk is measured against its ephemeral-storage limits (default 10 s, the
   * kubelet's eviction interval): a pod over them is evicted (Failed, Evicted), as a kubelet does.
   */
  storageCheckIntervalMs?: number;
  /** Hollow pods (hollow.ts, README.md) listen on 127.<this>.x.y (default 77). */
  hollowAddressOctet?: number;
  log?: (line: string) => void;
}

export interface NodeSimulator {
  /** Pods running now: "namespace/name" -> pod IP. */
  pods(): Map<string, string>;
  /** Stops watching and kills every pod's processes (their Pods stay as they are). */
  close(): Promise<void>;
}

const HOST_IP = '127.0.0.1';
/** On the pods the node runs: deleted, a pod stays (marked) until the node has stopped it. */
export const NODE_FINALIZER = 'svc.dev/node-simulator';

function podPath(namespace?: string): string {
  return namespace ? `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods` : '/api/v1/pods';
}

/** True when every port can be bound on `ip` (nobody else, e.g. another simulator, uses the address). */
async function addressFree(ip: string, ports: number[]): Promise<boolean> {
  for (const port of ports.length ? ports : [0]) {
    const free = await new Promise<boolean>((resolve) => {
      const server = net.createServer();
      server.once('error', () => resolve(false));
      server.listen(port, ip, () => server.close(() => resolve(true)));
    });
    if (!free) return false;
  }
  return true;
}

function containerPorts(pod: KObject): number[] {
  const containers = ((pod.spec as { containers?: Container[] } | undefined)?.containers ?? []);
  return containers.flatMap((c) => (c.ports ?? []).map((p) => p.containerPort));
}

/** Ports the node connects to: declared container ports and numbered probe ports (a jail lets in only these). */
function inboundPorts(pod: KObject): number[] {
  const containers = ((pod.spec as { containers?: Container[] } | undefined)?.containers ?? []);
  const probes = containers.flatMap((c) => [c.readinessProbe, c.livenessProbe].flatMap((p) => [p?.httpGet?.port, p?.tcpSocket?.port]));
  return [...new Set([...containerPorts(pod), ...probes.filter((p): p is number => typeof p === 'number')])];
}

function isTerminal(pod: KObject): boolean {
  const phase = (pod.status as { phase?: string } | undefined)?.phase;
  return phase === 'Succeeded' || phase === 'Failed';
}

export async function startNodeSimulator(options: NodeSimulatorOptions): Promise<NodeSimulator> {
  const log = options.log ?? (() => {});
  const api = new NodeApi(options.cluster, 'svc-node-simulator');
  const [first, last] = options.addressRange ?? [2, 254];
  const workers = new Map<string, PodWorker | HollowPod>(); // by uid
  const controller = new AbortController();
  await mkdir(options.dataDir, { recursive: true });
  const ctx = {
    api,
    hostIP: HOST_IP,
    images: options.images,
    commands: options.commands ?? {},
    podEnv: options.podEnv,
    restartBackoffMs: options.restartBackoffMs ?? 10_000,
    maxRestartBackoffMs: options.maxRestartBackoffMs ?? 300_000,
    killGraceMs: options.killGraceMs ?? 10_000,
    log,
  };
  // one admission at a time, so two pods never get the same address
  let admitting = Promise.resolve();
  // hollow pods: no process, one shared responder, their own addresses (and their own admission line)
  const hollow = { api, hostIP: HOST_IP, host: new HollowHost(), addresses: new HollowAddresses(options.hollowAddressOctet ?? 77), log };
  let admittingHollow = Promise.resolve();
  /** Hollow pods waiting in the admission line, and those of them deleted meanwhile (not admitted). */
  const hollowQueued = new Set<string>();
  const hollowCancelled = new Set<string>();

  function admitHollow(pod: KObject, uid: string): void {
    if (hollowQueued.has(uid)) return;
    hollowQueued.add(uid);
    admittingHollow = admittingHollow.then(async () => {
      hollowQueued.delete(uid);
      if (hollowCancelled.delete(uid) || controller.signal.aborted || workers.has(uid)) return;
      const worker = new HollowPod(pod, hollow);
      if (!(await worker.admit())) {
        log(`node simulator: no free address for hollow pod ${worker.key}`);
        return;
      }
      workers.set(uid, worker);
      log(`node simulator: hollow pod ${worker.key} on ${worker.ip}`);
      void worker.start().catch((err: Error) => log(`node simulator: hollow pod ${worker.key}: ${err.message}`));
    });
  }

  const owner = path.resolve(options.dataDir);
  const isolation = options.isolation;
  // a restarted node: the jail slots of its earlier pods are leftovers (their pods start again)
  if (isolation && 'jail' in isolation) await isolation.jail.sweep(owner, () => false).catch(() => 0);

  /** An isolated pod's slot (its address is the pod IP), or why it cannot have one. */
  async function place(pod: KObject, uid: string): Promise<PodPlacement> {
    if (!isolation) throw new Error('not an isolated node');
    if ('unavailable' in isolation) return { refusal: isolation.unavailable };
    const report = await checkIsolation();
    if (!report.ok) return { refusal: describeProblems(report) };
    try {
      return { jail: isolation.jail, slot: await isolation.jail.allocate(owner, uid, inboundPorts(pod)) };
    } catch (error) {
      return { refusal: (error as Error).message };
    }
  }

  async function allocateIp(pod: KObject): Promise<string | undefined> {
    const used = new Set([...workers.values()].map((w) => w.ip));
    for (let n = first; n <= last; n++) {
      const ip = `127.0.0.${n}`;
      if (!used.has(ip) && (await addressFree(ip, containerPorts(pod)))) return ip;
    }
    return undefined;
  }

  function admit(pod: KObject): void {
    const uid = pod.metadata?.uid;
    if (!uid || workers.has(uid) || pod.metadata?.deletionTimestamp || isTerminal(pod)) return;
    const nodeName = (pod.spec as { nodeName?: string } | undefined)?.nodeName;
    if (nodeName && nodeName !== 'svc-node-simulator') return;
    if (isHollowPod(pod)) return admitHollow(pod, uid);
    pending.add(uid);
    admitting = admitting.then(async () => {
      if (controller.signal.aborted || workers.has(uid) || deleted.has(uid)) return;
      const placement = isolation ? await place(pod, uid) : undefined;
      // deleted (or the node closing) while its slot was being made
      if (controller.signal.aborted || deleted.has(uid)) {
        if (placement && 'slot' in placement) await placement.jail.release(placement.slot).catch(() => undefined);
        return;
      }
      const ip = placement ? ('slot' in placement ? placement.slot.address : '') : await allocateIp(pod);
      if (ip === undefined) {
        log(`node simulator: no free loopback address for pod ${pod.metadata?.namespace}/${pod.metadata?.name}`);
        return;
      }
      // short: programs put Unix sockets in these directories (108-byte path limit)
      const dir = podDir(options.dataDir, uid);
      const worker = new PodWorker(pod, ip, dir, { ...ctx, podDir: dir }, placement);
      workers.set(uid, worker);
      // a delete of the pod now waits for its stop (its grace period), as with a kubelet
      if (!pod.metadata?.finalizers?.includes(NODE_FINALIZER)) void api.setPodFinalizer(pod, NODE_FINALIZER, true).catch((err: Error) => log(`node simulator: pod ${worker.key}: ${err.message}`));
      log(`node simulator: pod ${worker.key} on ${ip}`);
      void worker.start().catch((err: Error) => log(`node simulator: pod ${worker.key}: ${err.message}`));
    }).finally(() => {
      pending.delete(uid);
      deleted.delete(uid);
    });
  }

  /** Pods being stopped: close() waits for them too (their processes and jail slots). */
  const stopping = new Set<Promise<void>>();

  /** The stop under way of each pod being stopped: a second look at a pod waits for the same. */
  const stoppingByUid = new Map<string, Promise<void>>();

  async function evict(uid: string, graceMs?: number): Promise<void> {
    const under = stoppingByUid.get(uid);
    if (under) return under;
    const worker = workers.get(uid);
    if (!worker) return;
    workers.delete(uid);
    log(`node simulator: stopping pod ${worker.key}`);
    const stopped = worker instanceof PodWorker ? worker.stop(graceMs) : worker.stop();
    stopping.add(stopped);
    stoppingByUid.set(uid, stopped);
    try { await stopped; } finally { stopping.delete(stopped); stoppingByUid.delete(uid); }
  }

  /** Pods whose admission is in flight, and those of them deleted meanwhile. */
  const pending = new Set<string>();
  const deleted = new Set<string>();

  function handle(type: string, pod: KObject): void {
    const uid = pod.metadata?.uid;
    if (!uid) return;
    if (type === 'DELETED' || pod.metadata?.deletionTimestamp) {
      if (hollowQueued.has(uid)) hollowCancelled.add(uid);
      if (pending.has(uid)) deleted.add(uid);
      const stopped = evict(uid);
      // stopped (or never run here, e.g. deleted while this node was down): the pod may go
      if (type !== 'DELETED' && pod.metadata?.finalizers?.includes(NODE_FINALIZER)) {
        void stopped.then(() => api.setPodFinalizer(pod, NODE_FINALIZER, false)).catch((err: Error) => log(`node simulator: pod ${pod.metadata?.name}: ${err.message}`));
      }
    } else admit(pod);
  }

  async function relist(): Promise<string> {
    const list = await api.list(`${podPath(options.namespace)}?labelSelector=${encodeURIComponent(options.labelSelector)}`);
    const seen = new Set<string>();
    for (const pod of list.items) {
      seen.add(pod.metadata?.uid ?? '');
      handle('ADDED', pod);
    }
    for (const uid of [...workers.keys()]) if (!seen.has(uid)) void evict(uid);
    return list.metadata.resourceVersion;
  }

  // the kubelet's local storage eviction: a pod over its limits is Failed (Evicted) and its
  // containers killed at once (grace 0, as the kubelet evicts for ephemeral storage)
  async function evictOverStorage(): Promise<void> {
    for (const [uid, worker] of [...workers]) {
      if (!(worker instanceof PodWorker) || worker.stopped) continue;
      const message = await worker.storageOverLimit();
      if (!message || workers.get(uid) !== worker) continue;
      log(`node simulator: evicting pod ${worker.key}: ${message}`);
      await worker.markEvicted(message);
      await evict(uid, 0);
    }
  }
  let measuring = false;
  const storageCheck = setInterval(() => {
    if (measuring) return;
    measuring = true;
    evictOverStorage()
      .catch((err: Error) => log(`node simulator: measuring pods' disk failed: ${err.message}`))
      .finally(() => { measuring = false; });
  }, options.storageCheckIntervalMs ?? 10_000);
  storageCheck.unref();

  const loop = (async () => {
    let resourceVersion: string | undefined;
    while (!controller.signal.aborted) {
      try {
        resourceVersion ??= await relist();
        const query = new URLSearchParams({ watch: '1', labelSelector: options.labelSelector, resourceVersion, allowWatchBookmarks: 'true' });
        for await (const event of api.watch(`${podPath(options.namespace)}?${query.toString()}`, controller.signal)) {
          if (event.type === 'ERROR') {
            resourceVersion = undefined; // 410 Expired: list again
            break;
          }
          resourceVersion = event.object.metadata?.resourceVersion ?? resourceVersion;
          if (event.type !== 'BOOKMARK') handle(event.type, event.object);
        }
      } catch (err) {
        if (controller.signal.aborted) break;
        if (err instanceof NodeApiError && err.status === 410) resourceVersion = undefined;
        log(`node simulator: watch failed (${(err as Error).message}); retrying`);
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  })();

  return {
    pods: () => new Map([...workers.values()].map((w) => [w.key, w.ip])),
    async close() {
      clearInterval(storageCheck);
      controller.abort();
      await loop;
      await admitting;
      await admittingHollow;
      await Promise.all([...workers.keys()].map((uid) => evict(uid)));
      await Promise.allSettled([...stopping]);
    },
  };
}
