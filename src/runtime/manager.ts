/**
 * The manager runs controllers (and other leader-only work, such as the cron scheduler) only
 * while it holds the Lease: informers and queues start when it becomes leader and stop when
 * it loses the Lease. With leader election off it runs them at once (single-process setups).
 */
import { KubeCache, type CachedResource, type Informer, type KubeClient } from '../kube/index.js';
import { createLogger, type Logger } from '../lib/log.js';
import type { KubeObject, ResourceType } from '../resources/index.js';
import { RunningController, type ControllerDefinition, type ReconcileContext } from './controller.js';
import { LeaderElector, type LeaderElectionOptions } from './leader.js';

/**
 * Leader-only work that is not a reconcile (mirror pruning, the cron scheduler, the idle sweep):
 * started after the caches synced, stopped (before the caches) when leadership ends. `ctx.signal`
 * aborts at that moment; `ctx.log` is bound to the runnable's name.
 */
export interface Runnable {
  name: string;
  start(ctx: ReconcileContext): Promise<void> | void;
  stop(): Promise<void> | void;
}

export interface ManagerOptions {
  client: KubeClient;
  /** Watch one namespace; all when absent. */
  namespace?: string;
  /** Lease settings; `false` runs without leader election. */
  leaderElection:
    | false
    | (Pick<LeaderElectionOptions, 'namespace' | 'name' | 'identity' | 'leaseDurationMs' | 'renewIntervalMs' | 'renewDeadlineMs' | 'retryIntervalMs'>);
  /** Informer relist period (default 5 minutes). */
  relistIntervalMs?: number;
  /** Where log lines go (one structured line each, src/lib/log.ts, no newline). */
  log?: (message: string) => void;
  /** Also write debug lines (conflicts retried, ...). */
  debug?: boolean;
  /**
   * How long a stop waits for reconciles and runnables in flight (told to end through
   * `ctx.signal`) before it goes on without them and releases the Lease (default 30 s, as
   * controller-runtime's GracefulShutdownTimeout). A reconcile is safe to cut anywhere (the next
   * leader redoes it), so the bound only trades finished work against a quick handover.
   */
  gracefulShutdownTimeoutMs?: number;
  /**
   * Called when work outlived that bound, before the Lease is released: end what it is stuck in
   * (the operator kills its git processes), so that nothing this process started runs on under
   * the next leader.
   */
  abandon?: () => Promise<void> | void;
}

const DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT_MS = 30_000;

export class Manager {
  private readonly definitions: ControllerDefinition[] = [];
  private readonly runnables: Runnable[] = [];
  private cache: KubeCache;
  private abort = new AbortController();
  private readonly logger: Logger;
  private controllers: RunningController[] = [];
  private readonly elector?: LeaderElector;
  private active = false;
  /** Controllers started and not yet told to stop. */
  private running = false;
  /** The state the latest transition asked for (an activation in progress checks it). */
  private wanted = false;
  /** Serializes start/stop of the controllers (leadership can flap). */
  private transition: Promise<void> = Promise.resolve();
  private readonly leadershipListeners: ((leading: boolean) => void)[] = [];

  constructor(private readonly options: ManagerOptions) {
    this.logger = createLogger(options.log ?? (() => undefined), { debug: options.debug });
    this.cache = this.newCache();
    if (options.leaderElection) {
      this.elector = new LeaderElector({
        ...options.leaderElection,
        client: options.client,
        onStartedLeading: () => this.enqueueTransition(true),
        onStoppedLeading: () => this.enqueueTransition(false),
        onError: (err) => this.logger.warn(`leader election: ${(err as Error).message ?? err}`, { manager: this.identity }),
      });
    }
  }

  get identity(): string | undefined {
    return this.elector?.identity;
  }

  add(definition: ControllerDefinition): this {
    this.definitions.push(definition);
    return this;
  }

  addRunnable(runnable: Runnable): this {
    this.runnables.push(runnable);
    return this;
  }

  /** True while controllers run (this manager leads, or leader election is off and it started). */
  isActive(): boolean {
    return this.running;
  }

  onLeadershipChange(listener: (leading: boolean) => void): void {
    this.leadershipListeners.push(listener);
  }

  /** The shared cache of `type` while active (a type first asked for while active starts at once). */
  informer<T extends KubeObject>(type: ResourceType): Informer<T> {
    return this.cache.informer<T>(type);
  }

  /** The typed handle of `type` over the shared cache. */
  resource<T extends KubeObject>(type: ResourceType): CachedResource<T> {
    return this.cache.resource<T>(type);
  }

  private newCache(): KubeCache {
    return new KubeCache(this.options.client, {
      namespace: this.options.namespace,
      relistIntervalMs: this.options.relistIntervalMs,
      onError: (type, err) => this.logger.warn(`informer ${type.plural}: ${err.message}`, { manager: this.identity }),
    });
  }

  async start(): Promise<void> {
    if (this.elector) this.elector.start();
    else await this.enqueueTransition(true);
  }

  /** Stops everything; a leader releases the Lease unless `releaseLease` is false. */
  async stop({ releaseLease = true }: { releaseLease?: boolean } = {}): Promise<void> {
    if (this.elector) await this.elector.stop({ release: releaseLease });
    await this.enqueueTransition(false);
  }

  private enqueueTransition(leading: boolean): Promise<void> {
    this.wanted = leading;
    // An activation may be waiting for informers that cannot sync (API server down): stopping
    // them ends that wait, so that the deactivation queued behind it can run.
    if (!leading) {
      this.abort.abort();
      void this.cache.stop();
    }
    this.transition = this.transition.then(() => (leading ? this.activate() : this.deactivate()));
    return this.transition;
  }

  private async activate(): Promise<void> {
    if (this.active || !this.wanted) return;
    this.active = true;
    this.log('started leading: starting controllers');
    this.abort = new AbortController();
    const ctx: ReconcileContext = {
      client: this.options.client,
      informer: (type) => this.informer(type),
      resource: (type) => this.resource(type),
      signal: this.abort.signal,
      log: this.logger,
    };
    this.controllers = this.definitions.map(
      (def) => new RunningController(def, ctx, (name, key, err) => {
        this.logger.error(`${name} ${key}: ${(err as Error)?.message ?? err}`, { controller: name, object: key });
      }),
    );
    await this.cache.start();
    if (!this.wanted) return; // the queued deactivation cleans up
    for (const controller of this.controllers) controller.start();
    for (const runnable of this.runnables) await runnable.start({ ...ctx, log: this.logger.with({ runnable: runnable.name }) });
    this.running = true;
    this.leadershipListeners.forEach((l) => l(true));
  }

  private async deactivate(): Promise<void> {
    if (!this.active) return;
    this.active = false;
    this.running = false;
    this.log('stopped leading: stopping controllers');
    this.abort.abort();
    await this.stopWithin(this.options.gracefulShutdownTimeoutMs ?? DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT_MS);
    await this.cache.stop();
    // Fresh caches next time: handlers belong to the controllers just stopped.
    this.cache = this.newCache();
    this.controllers = [];
    this.leadershipListeners.forEach((l) => l(false));
  }

  /** Stops runnables and controllers; past `timeoutMs` it names what is still running, abandons it, and returns. */
  private async stopWithin(timeoutMs: number): Promise<void> {
    const controllers = this.controllers;
    // all told at once (a queue stops taking work when told), then waited for
    const stopped = Promise.all([
      (async () => { for (const runnable of this.runnables) await runnable.stop(); })(),
      ...controllers.map((c) => c.stop()),
    ]);
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<'expired'>((resolve) => { timer = setTimeout(() => resolve('expired'), timeoutMs); });
    const outcome = await Promise.race([stopped.then(() => 'stopped' as const), expired]);
    clearTimeout(timer);
    if (outcome === 'stopped') return;
    const running = controllers.flatMap((c) => c.inFlight().map((key) => `${c.definition.name} ${key}`));
    this.logger.warn(`still running ${timeoutMs} ms after the stop, going on without: ${running.join(', ') || 'a runnable'}`, { manager: this.identity });
    try {
      await this.options.abandon?.();
    } catch (err) {
      this.logger.warn(`abandoning work in flight: ${(err as Error).message ?? err}`, { manager: this.identity });
    }
  }

  private log(message: string): void {
    this.logger.info(message, { manager: this.identity });
  }
}
