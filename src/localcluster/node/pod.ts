// One Pod on the simulated node: a process per container, its probes, restarts per the pod's
// restartPolicy with the kubelet's back-off, and the Pod status written after every change. On an
// isolated node (src/lib/jail) the pod is one jail slot (its network namespace and address) and
// each container a jailed process in it, as its securityContext says (runAs).
//
// The launch path of a container, for readers adding another kind of pod beside it:
//   ContainerRunner.start -> resolve (image, env, mounts) -> launch(): jailed or plain spawn
//   ContainerRunner.kill  -> stopProcess(): jail.terminate or a signal to the process group
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, createWriteStream, fstatSync, openSync, readSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { diskUsage } from '../../lib/disk-usage.js';
import type { Jail, JailSlot, ResourceLimits } from '../../lib/jail/index.js';
import type { KObject } from '../status.js';
import type { NodeApi } from './api.js';
import { ContainerConfigError, podLimits, resolveProcess, runAs, storageLimits, type Container, type ImageConfig, type StorageLimits, type ProcessSpec, type Probe, type RunAs } from './container.js';
import { podStatus, terminatedFromExit, type ContainerState, type ContainerView, type PodCondition, type Terminated } from './status.js';

export interface PodContext {
  api: NodeApi;
  hostIP: string;
  podDir: string;
  images: (image: string) => ImageConfig | undefined;
  commands: Record<string, string[]>;
  podEnv?: (pod: { namespace: string; name: string; ip: string }) => Promise<Record<string, string>> | Record<string, string>;
  restartBackoffMs: number;
  maxRestartBackoffMs: number;
  killGraceMs: number;
  log: (line: string) => void;
}

/** Where an isolated pod runs: its jail slot, or why it cannot have one. */
export type PodPlacement = { jail: Jail; slot: JailSlot } | { refusal: string };

/** A volume mount of a container: the local directory behind its mountPath. */
interface LocalMount { mountPath: string; dir: string; readOnly: boolean }

interface Run {
  child: ChildProcess;
  logPath: string;
  startedAt: string;
  containerID: string;
  exited: Promise<void>;
}

class ContainerRunner {
  view: ContainerView;
  run?: Run;
  /** The probes' next ticks (one per probe; a tick that ran is taken out). */
  private readonly probeTimers = new Set<NodeJS.Timeout>();
  private restartTimer?: NodeJS.Timeout;
  private backoffMs: number;

  constructor(readonly pod: PodWorker, readonly spec: Container) {
    this.view = { name: spec.name, image: spec.image ?? '', state: { waiting: { reason: 'ContainerCreating' } }, restartCount: 0, ready: false };
    this.backoffMs = pod.ctx.restartBackoffMs;
  }

  async start(): Promise<void> {
    if (this.pod.stopped) return;
    const { ctx, obj } = this.pod;
    const image = this.spec.image ? ctx.images(this.spec.image) : undefined;
    if (!image) {
      const message = `image "${this.spec.image ?? ''}" is not known to the node simulator`;
      this.setState({ waiting: { reason: 'ErrImagePull', message } });
      void this.pod.event('Warning', 'Failed', `Failed to pull image "${this.spec.image ?? ''}": ${message}`);
      // a kubelet keeps retrying the pull; so do we, showing ImagePullBackOff in between
      setTimeout(() => {
        if (!this.pod.stopped) this.setState({ waiting: { reason: 'ImagePullBackOff', message: `Back-off pulling image "${this.spec.image ?? ''}"` } });
      }, Math.min(this.backoffMs / 2, 1000)).unref();
      this.scheduleRestart();
      return;
    }
    const placement = this.pod.placement;
    if (placement && 'refusal' in placement) {
      const message = `the pod cannot be isolated on this node: ${placement.refusal}`;
      this.setState({ waiting: { reason: 'CreateContainerError', message } });
      void this.pod.event('Warning', 'Failed', `Error: ${message}`);
      this.scheduleRestart();
      return;
    }
    let spec: ProcessSpec;
    let mounts: LocalMount[];
    let user: RunAs | undefined;
    let limits: ResourceLimits | undefined;
    try {
      mounts = await this.pod.mounts(this.spec);
      // jailed, mount paths are real inside: nothing to rewrite
      const rewrites = placement ? {} : Object.fromEntries(mounts.map((m) => [m.mountPath, m.dir]));
      spec = await resolveProcess({
        pod: obj, container: this.spec, image, podIP: this.pod.ip, hostIP: ctx.hostIP, mounts: rewrites, commands: ctx.commands,
        defaultCwd: placement ? '/' : this.pod.dir, sources: this.pod.sources,
      });
      if (placement) {
        user = runAs(obj, this.spec, image);
        limits = podLimits(obj);
      } else {
        Object.assign(spec.env, await ctx.podEnv?.({ namespace: this.pod.namespace, name: this.pod.name, ip: this.pod.ip }));
        await mkdir(spec.cwd, { recursive: true });
      }
    } catch (err) {
      if (this.pod.stopped) return;
      const message = (err as Error).message;
      this.setState({ waiting: { reason: err instanceof ContainerConfigError ? 'CreateContainerConfigError' : 'CreateContainerError', message } });
      void this.pod.event('Warning', 'Failed', `Error: ${message}`);
      this.scheduleRestart();
      return;
    }
    if (this.pod.stopped) return;
    const logDir = path.join(this.pod.dir, 'logs', this.spec.name);
    await mkdir(logDir, { recursive: true });
    // as the kubelet: the current run's log and the previous one's, no older (a crash loop made one a run)
    const older = this.view.restartCount - 2;
    if (older >= 0) await rm(path.join(logDir, `${older}.log`), { force: true });
    const logPath = path.join(logDir, `${this.view.restartCount}.log`);
    const logFile = createWriteStream(logPath);
    // (read before the start: the exit's listener must be in place before the next await)
    const oomKillsBefore = await this.oomKills();
    let child: ChildProcess;
    try {
      child = await this.launch(spec, mounts, user, image, limits);
    } catch (err) {
      logFile.end();
      if (this.pod.stopped) return;
      const message = (err as Error).message;
      this.setState({ waiting: { reason: 'CreateContainerError', message } });
      void this.pod.event('Warning', 'Failed', `Error: ${message}`);
      this.scheduleRestart();
      return;
    }
    child.stdout!.pipe(logFile, { end: false });
    child.stderr!.pipe(logFile, { end: false });
    const startedAt = new Date().toISOString();
    const containerID = `simulator://${this.pod.uid}/${this.spec.name}/${this.view.restartCount}`;
    let spawnError: Error | undefined;
    child.once('error', (err) => { spawnError = err; });
    const exited = new Promise<void>((resolve) => child.once('close', (code, signal) => {
      logFile.end(() => {
        // as the kubelet: a container the kernel ended for its pod's memory is OOMKilled
        void this.oomKills().then((after) => {
          this.onExit(code, signal, startedAt, containerID, logPath, spawnError, after > oomKillsBefore);
          resolve();
        });
      });
    }));
    this.run = { child, logPath, startedAt, containerID, exited };
    this.view.containerID = containerID;
    this.setState({ running: { startedAt } });
    void this.pod.event('Normal', 'Started', `Started container ${this.spec.name}`);
    this.startProbes();
  }

  /** The container's process: jailed in the pod's slot on an isolated node, else a plain child. */
  private async launch(spec: ProcessSpec, mounts: LocalMount[], user: RunAs | undefined, image: ImageConfig, limits?: ResourceLimits): Promise<ChildProcess> {
    const placement = this.pod.placement;
    if (placement && 'jail' in placement) {
      return placement.jail.spawn(placement.slot, {
        argv: spec.argv, env: spec.env, cwd: spec.cwd,
        volumes: [
          ...(image.files ?? []).map((f) => ({ source: f.source, target: f.target, writable: false })),
          ...mounts.map((m) => ({ source: m.dir, target: m.mountPath, writable: !m.readOnly })),
        ],
        uid: user?.uid, gid: user?.gid, readOnlyTmp: user?.readOnlyRoot,
        stdio: ['ignore', 'pipe', 'pipe'], detached: true,
        // the pod's group, as the kubelet sizes it (every container of the pod sets the same)
        limits,
      });
    }
    return spawn(spec.argv[0]!, spec.argv.slice(1), { env: spec.env, cwd: spec.cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  }

  /** How often the kernel ended a process of this pod's group for its memory (0 unjailed or unknown). */
  private async oomKills(): Promise<number> {
    const placement = this.pod.placement;
    if (!placement || !('jail' in placement)) return 0;
    return (await placement.jail.oomKills(placement.slot.index))?.count ?? 0;
  }

  private onExit(code: number | null, signal: NodeJS.Signals | null, startedAt: string, containerID: string, logPath: string, spawnError?: Error, oomKilled = false): void {
    this.stopProbes();
    this.run = undefined;
    const terminated: Terminated = spawnError
      ? { exitCode: 128, reason: 'StartError', message: spawnError.message, startedAt, finishedAt: new Date().toISOString(), containerID }
      : terminatedFromExit(code, signal, startedAt, new Date().toISOString(), containerID);
    if (oomKilled && terminated.exitCode !== 0) terminated.reason = 'OOMKilled';
    if (!spawnError && terminated.exitCode !== 0 && this.spec.terminationMessagePolicy === 'FallbackToLogsOnError') {
      const message = logTail(logPath);
      if (message) terminated.message = message;
    }
    if (this.pod.stopped) return;
    const policy = this.pod.restartPolicy;
    const restart = policy === 'Always' || (policy === 'OnFailure' && terminated.exitCode !== 0);
    if (!restart) {
      this.view.ready = false;
      this.setState({ terminated });
      return;
    }
    // ran long enough: the kubelet resets the back-off after 10 minutes of running
    if (Date.parse(terminated.finishedAt) - Date.parse(startedAt) > 600_000) this.backoffMs = this.pod.ctx.restartBackoffMs;
    this.view.lastTerminated = terminated;
    this.view.restartCount++;
    this.view.ready = false;
    const message = `back-off ${Math.round(this.backoffMs / 1000)}s restarting failed container=${this.spec.name} pod=${this.pod.name}_${this.pod.namespace}(${this.pod.uid})`;
    this.setState({ waiting: { reason: 'CrashLoopBackOff', message } });
    void this.pod.event('Warning', 'BackOff', 'Back-off restarting failed container');
    this.scheduleRestart();
  }

  private scheduleRestart(): void {
    const delay = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, this.pod.ctx.maxRestartBackoffMs);
    this.restartTimer = setTimeout(() => {
      void this.start().catch((err: Error) => this.pod.ctx.log(`pod ${this.pod.key}: ${err.message}`));
    }, delay);
  }

  private setState(state: ContainerState): void {
    this.view.state = state;
    if (!('running' in state)) this.view.ready = false;
    this.pod.changed();
  }

  private startProbes(): void {
    const { readinessProbe, livenessProbe } = this.spec;
    // without a readiness probe a running container is ready
    if (!readinessProbe) {
      this.view.ready = true;
      this.pod.changed();
    } else {
      this.probeLoop(readinessProbe, (ok) => {
        if (this.view.ready !== ok) {
          this.view.ready = ok;
          this.pod.changed();
        }
      });
    }
    if (livenessProbe) {
      this.probeLoop(livenessProbe, (ok, failures, message) => {
        if (ok || failures < (livenessProbe.failureThreshold ?? 3)) return;
        void this.pod.event('Normal', 'Killing', `Container ${this.spec.name} failed liveness probe, will be restarted`);
        void this.pod.event('Warning', 'Unhealthy', `Liveness probe failed: ${message}`);
        void this.kill();
      });
    }
  }

  /** Runs `probe` every periodSeconds; `onResult` sees the thresholded result and the failure run. */
  private probeLoop(probe: Probe, onResult: (ok: boolean, failures: number, message: string) => void): void {
    const period = Math.max(1, probe.periodSeconds ?? 10) * 1000;
    let successes = 0, failures = 0, ok = false;
    const tick = async () => {
      if (!this.run) return;
      const result = await runProbe(probe, this.pod.ip, this.spec);
      if (!this.run) return;
      if (result.ok) { successes++; failures = 0; } else { failures++; successes = 0; }
      if (result.ok && successes >= (probe.successThreshold ?? 1)) ok = true;
      if (!result.ok && failures >= (probe.failureThreshold ?? 3)) ok = false;
      onResult(ok, failures, result.message);
      this.probeAfter(period, tick);
    };
    this.probeAfter((probe.initialDelaySeconds ?? 0) * 1000, tick);
  }

  private probeAfter(ms: number, tick: () => Promise<void>): void {
    const timer = setTimeout(() => {
      this.probeTimers.delete(timer);
      void tick();
    }, ms);
    this.probeTimers.add(timer);
  }

  private stopProbes(): void {
    for (const t of this.probeTimers) clearTimeout(t);
    this.probeTimers.clear();
  }

  /** SIGTERM to the process (its group; jailed: its main program), SIGKILL after the grace period. */
  async kill(graceMs = this.pod.ctx.killGraceMs): Promise<void> {
    clearTimeout(this.restartTimer);
    const run = this.run;
    if (!run) return;
    const placement = this.pod.placement;
    if (placement && 'jail' in placement) {
      await placement.jail.terminate(placement.slot, run.child.pid!, graceMs);
      await run.exited;
      return;
    }
    signalGroup(run.child, 'SIGTERM');
    const timer = setTimeout(() => signalGroup(run.child, 'SIGKILL'), graceMs);
    await run.exited;
    clearTimeout(timer);
  }

  async stop(graceMs = Math.min(this.pod.ctx.killGraceMs, this.pod.gracePeriodMs)): Promise<void> {
    this.stopProbes();
    await this.kill(graceMs);
  }
}

/** The kubelet's FallbackToLogsOnError: the log's last 80 lines, at most 2048 bytes. */
function logTail(file: string): string | undefined {
  let fd: number | undefined;
  try {
    // the last 2048 bytes only: the whole log (as large as the container made it) was read at every exit
    fd = openSync(file, 'r');
    const size = fstatSync(fd).size;
    const tail = Buffer.alloc(Math.min(size, 2048));
    readSync(fd, tail, 0, tail.length, size - tail.length);
    return tail.toString('utf8').split('\n').slice(-81).join('\n').trim() || undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    try { child.kill(signal); } catch { /* gone */ }
  }
}

function probePort(port: number | string, container: Container): number | undefined {
  if (typeof port === 'number') return port;
  if (/^\d+$/.test(port)) return Number(port);
  return container.ports?.find((p) => p.name === port)?.containerPort;
}

/** What a probe reads of an answer (the kubelet's maxRespBodyLength): a container answers what it likes. */
const PROBE_BODY_BYTES = 10 * 1024;

/** Reads up to `max` bytes of `res`'s body, then lets the rest go. */
async function readAtMost(res: globalThis.Response, max: number): Promise<void> {
  const reader = res.body?.getReader();
  if (!reader) return;
  try {
    for (let read = 0; read < max;) {
      const { done, value } = await reader.read();
      if (done) return;
      read += value.length;
    }
  } catch {
    return; // cut off, or timed out: the status decides
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

export async function runProbe(probe: Probe, podIP: string, container: Container): Promise<{ ok: boolean; message: string }> {
  const timeoutMs = Math.max(1, probe.timeoutSeconds ?? 1) * 1000;
  if (probe.httpGet) {
    const port = probePort(probe.httpGet.port, container);
    if (port === undefined) return { ok: false, message: `port ${probe.httpGet.port} not found` };
    const scheme = (probe.httpGet.scheme ?? 'HTTP').toLowerCase();
    const url = `${scheme}://${probe.httpGet.host ?? podIP}:${port}${probe.httpGet.path ?? '/'}`;
    try {
      const headers = Object.fromEntries((probe.httpGet.httpHeaders ?? []).map((h) => [h.name, h.value]));
      // as the kubelet: a redirect is not followed (a 3xx counts as success), at most 10 KiB of the body is read
      const res = await fetch(url, { headers: { 'user-agent': 'kube-probe/1.31', ...headers }, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
      await readAtMost(res, PROBE_BODY_BYTES);
      return res.status >= 200 && res.status < 400 ? { ok: true, message: '' } : { ok: false, message: `HTTP probe failed with statuscode: ${res.status}` };
    } catch (err) {
      return { ok: false, message: `Get "${url}": ${(err as Error).message}` };
    }
  }
  if (probe.tcpSocket) {
    const port = probePort(probe.tcpSocket.port, container);
    if (port === undefined) return { ok: false, message: `port ${probe.tcpSocket.port} not found` };
    return new Promise((resolve) => {
      const socket = net.connect({ host: probe.tcpSocket!.host ?? podIP, port, timeout: timeoutMs });
      socket.once('connect', () => { socket.destroy(); resolve({ ok: true, message: '' }); });
      socket.once('timeout', () => { socket.destroy(); resolve({ ok: false, message: 'dial tcp: i/o timeout' }); });
      socket.once('error', (err) => resolve({ ok: false, message: `dial tcp: ${err.message}` }));
    });
  }
  return { ok: false, message: 'only httpGet and tcpSocket probes are supported by the node simulator' };
}

export class PodWorker {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly key: string;
  readonly restartPolicy: string;
  readonly gracePeriodMs: number;
  readonly startTime = new Date().toISOString();
  stopped = false;
  private containers: ContainerRunner[];
  private conditions?: PodCondition[];
  private writing = Promise.resolve();
  private dirty = false;
  /** Why the node evicted the pod (its ephemeral storage): its status says Failed, Evicted. */
  private evicted?: string;
  readonly sources;

  constructor(readonly obj: KObject, readonly ip: string, readonly dir: string, readonly ctx: PodContext, readonly placement?: PodPlacement) {
    const meta = obj.metadata ?? {};
    this.namespace = meta.namespace ?? 'default';
    this.name = meta.name ?? '';
    this.uid = meta.uid ?? '';
    this.key = `${this.namespace}/${this.name}`;
    const spec = (obj.spec ?? {}) as { restartPolicy?: string; containers?: Container[]; terminationGracePeriodSeconds?: number };
    this.restartPolicy = spec.restartPolicy ?? 'Always';
    this.gracePeriodMs = (spec.terminationGracePeriodSeconds ?? 30) * 1000;
    this.containers = (spec.containers ?? []).map((c) => new ContainerRunner(this, c));
    this.conditions = ((obj.status as { conditions?: PodCondition[] } | undefined)?.conditions);
    this.sources = {
      secret: (name: string) => ctx.api.configData(this.namespace, 'secrets', name),
      configMap: (name: string) => ctx.api.configData(this.namespace, 'configmaps', name),
    };
  }

  async start(): Promise<void> {
    this.changed();
    await Promise.all(this.containers.map((c) => c.start()));
  }

  /** Local directories for the container's emptyDir mounts (other volume kinds are refused). */
  async mounts(container: Container): Promise<LocalMount[]> {
    const volumes = ((this.obj.spec as { volumes?: { name: string; emptyDir?: object }[] }).volumes ?? []);
    const out: LocalMount[] = [];
    for (const mount of container.volumeMounts ?? []) {
      const volume = volumes.find((v) => v.name === mount.name);
      if (!volume) throw new ContainerConfigError(`volume "${mount.name}" not found`);
      if (!volume.emptyDir) throw new ContainerConfigError(`volume "${mount.name}": only emptyDir volumes are supported by the node simulator`);
      const dir = path.join(this.dir, 'v', mount.name, mount.subPath ?? '');
      await mkdir(dir, { recursive: true });
      out.push({ mountPath: mount.mountPath, dir, readOnly: mount.readOnly === true });
    }
    return out;
  }

  event(type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return this.ctx.api.event(this.obj, type, reason, message).catch(() => undefined);
  }

  /** Writes the status; writes that pile up while one is in flight become one. */
  changed(): void {
    if (this.stopped) return;
    if (this.dirty) return;
    this.dirty = true;
    this.writing = this.writing.then(async () => {
      this.dirty = false;
      if (this.stopped) return;
      const status = podStatus({
        podIP: this.ip, hostIP: this.ctx.hostIP, startTime: this.startTime, restartPolicy: this.restartPolicy,
        containers: this.containers.map((c) => ({ ...c.view })), previousConditions: this.conditions, now: new Date().toISOString(),
      });
      this.conditions = status.conditions as PodCondition[];
      if (this.evicted) Object.assign(status, { phase: 'Failed', reason: 'Evicted', message: this.evicted });
      try {
        await this.ctx.api.patchPodStatus(this.namespace, this.name, this.uid, status);
      } catch (err) {
        if (!this.stopped) this.ctx.log(`pod ${this.key}: status not written: ${(err as Error).message}`);
      }
    });
  }

  /**
   * The kubelet's eviction message when the pod holds more disk than it may (an emptyDir over its
   * sizeLimit, else volumes and logs together over its containers' ephemeral-storage limits).
   */
  async storageOverLimit(): Promise<string | undefined> {
    let limits: StorageLimits;
    try {
      limits = storageLimits(this.obj);
    } catch {
      return undefined; // a quantity that is none: its container says so when it starts
    }
    // the whole pod first: a volume still being written is then measured at least as full as it
    // was in the total, so the volume over its own limit is the one named, as the kubelet does
    const podUsed = limits.pod ? await diskUsage([this.dir]) : undefined;
    for (const volume of limits.volumes) {
      const used = await diskUsage([path.join(this.dir, 'v', volume.name)]);
      if (used !== undefined && used > volume.bytes) return `Usage of EmptyDir volume "${volume.name}" exceeds the limit "${volume.text}".`;
    }
    return limits.pod && podUsed !== undefined && podUsed > limits.pod.bytes ? `Pod ephemeral local storage usage exceeds the total limit of containers ${limits.pod.text}.` : undefined;
  }

  /** Evicted by the node: its status says so (Failed, Evicted, why) before its containers are stopped. */
  async markEvicted(message: string): Promise<void> {
    this.evicted = message;
    void this.event('Warning', 'Evicted', message);
    this.changed();
    await this.writing;
  }

  /** The pod is gone (or going, or evicted: then `graceMs` 0): stop every container and forget its files. */
  async stop(graceMs?: number): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await Promise.all(this.containers.map((c) => c.stop(graceMs)));
    await this.writing;
    if (this.placement && 'jail' in this.placement) {
      // what fails here is swept later (a restarted node, or anyone once the node's folder is gone)
      await this.placement.jail.release(this.placement.slot).catch((err: Error) => this.ctx.log(`pod ${this.key}: its jail slot was not released: ${err.message}`));
    }
    await rm(this.dir, { recursive: true, force: true });
  }
}
