/**
 * The manager runs controllers (and other leader-only work, such as the cron scheduler) only
 * while it holds the Lease: informers and queues start when it becomes leader and stop when
 * it loses the Lease. With leader election off it runs them at once (single-process setups).
 */
import { Informer, type KubeClient } from '../kube/index.js';
import type { KubeObject, ResourceType } from '../resources/index.js';
import { RunningController, typeId, type ControllerDefinition, type ReconcileContext } from './controller.js';
import { LeaderElector, type LeaderElectionOptions } from './leader.js';

/** Leader-only work besides controllers. */
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
  /** `fields` carry structure for JSON logs (level, controller, namespace, name). */
  log?: (message: string, fields?: Record<string, unknown>) => void;
}

export class Manager {
  private readonly definitions: ControllerDefinition[] = [];
  private readonly runnables: Runnable[] = [];
  private readonly informers = new Map<string, Informer<KubeObject>>();
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
    if (options.leaderElection) {
      this.elector = new LeaderElector({
        ...options.leaderElection,
        client: options.client,
        onStartedLeading: () => this.enqueueTransition(true),
        onStoppedLeading: () => this.enqueueTransition(false),
        onError: (err) => this.log(`leader election: ${(err as Error).message ?? err}`, { level: 'warn' }),
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

  /** The shared cache of `type` while active. */
  informer<T extends KubeObject>(type: ResourceType): Informer<T> {
    const id = typeId(type);
    let informer = this.informers.get(id);
    if (!informer) {
      informer = new Informer(this.options.client, type, { namespace: this.options.namespace, relistIntervalMs: this.options.relistIntervalMs });
      informer.onError((err) => this.log(`informer ${type.plural}: ${err.message}`, { level: 'warn' }));
      this.informers.set(id, informer);
      // A type first asked for while active (by a runnable, say) starts at once.
      if (this.active) void informer.start();
    }
    return informer as unknown as Informer<T>;
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
    if (!leading) for (const informer of this.informers.values()) void informer.stop();
    this.transition = this.transition.then(() => (leading ? this.activate() : this.deactivate()));
    return this.transition;
  }

  private async activate(): Promise<void> {
    if (this.active || !this.wanted) return;
    this.active = true;
    this.log('started leading: starting controllers');
    const ctx: ReconcileContext = { client: this.options.client, informer: (type) => this.informer(type) };
    this.controllers = this.definitions.map(
      (def) => new RunningController(def, ctx, (name, key, err) => {
        const [namespace, objectName] = key.includes('/') ? key.split('/', 2) : [undefined, key];
        this.log(`${name} ${key}: ${(err as Error)?.message ?? err}`, { level: 'error', controller: name, namespace, name: objectName });
      }),
    );
    await Promise.all([...this.informers.values()].map((i) => i.start()));
    if (!this.wanted) return; // the queued deactivation cleans up
    for (const controller of this.controllers) controller.start();
    for (const runnable of this.runnables) await runnable.start(ctx);
    this.running = true;
    this.leadershipListeners.forEach((l) => l(true));
  }

  private async deactivate(): Promise<void> {
    if (!this.active) return;
    this.active = false;
    this.running = false;
    this.log('stopped leading: stopping controllers');
    for (const runnable of this.runnables) await runnable.stop();
    await Promise.all(this.controllers.map((c) => c.stop()));
    await Promise.all([...this.informers.values()].map((i) => i.stop()));
    // Fresh caches next time: handlers belong to the controllers just stopped.
    this.informers.clear();
    this.controllers = [];
    this.leadershipListeners.forEach((l) => l(false));
  }

  private log(message: string, fields?: Record<string, unknown>): void {
    this.options.log?.(`[manager${this.identity ? ` ${this.identity}` : ''}] ${message}`, fields);
  }
}
