/**
 * Leader election on a coordination.k8s.io/v1 Lease (client-go's algorithm): the holder
 * renews renewTime every renewInterval; a candidate takes the Lease when it has not seen it
 * change for leaseDurationSeconds (measured on its own clock, from when it observed the
 * record) or when it is released; writes carry resourceVersion, so of two candidates one wins.
 * A leader that cannot renew for renewDeadline stops leading before the Lease can expire.
 * Every candidate also watches the Lease: it sees a release at once (a clean shutdown hands over
 * in milliseconds), observes each renewal when it happens rather than at its next poll, and wakes
 * exactly when the holder's lease runs out (a crashed leader is replaced within the lease
 * duration); polling every retryInterval remains the safety net when the watch is down.
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { Informer, isAlreadyExists, isConflict, Sleeper, type KubeClient, type ResourceClient } from '../kube/index.js';
import { LEASE, type KubeObject } from '../resources/index.js';

export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}
export type Lease = KubeObject & { spec?: LeaseSpec };

export interface LeaderElectionOptions {
  client: KubeClient;
  namespace: string;
  name: string;
  /** Unique per process (default: hostname + random). */
  identity?: string;
  /** Default 15 s; written to the Lease in whole seconds. */
  leaseDurationMs?: number;
  /** How often the leader renews (default 5 s). */
  renewIntervalMs?: number;
  /** A leader that could not renew for this long stops leading (default 2/3 of the lease duration). */
  renewDeadlineMs?: number;
  /** How often a candidate tries (default 2 s). */
  retryIntervalMs?: number;
  onStartedLeading: () => Promise<void> | void;
  onStoppedLeading: () => Promise<void> | void;
  onError?: (err: unknown) => void;
}

/** Kubernetes MicroTime: RFC 3339 with microseconds. */
export function microTime(date: Date): string {
  return date.toISOString().replace(/Z$/, '000Z');
}

export function defaultIdentity(): string {
  return `${hostname()}-${randomUUID().slice(0, 8)}`;
}

export class LeaderElector {
  readonly identity: string;
  private readonly leases: ResourceClient<Lease>;
  private readonly leaseDurationMs: number;
  private readonly renewIntervalMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryIntervalMs: number;
  private leading = false;
  private running = false;
  private lastRenewal = 0;
  private observed?: { record: string; at: number; holder: string; durationMs: number };
  private loop?: Promise<void>;
  private readonly sleeper = new Sleeper();
  private readonly watch: Informer<Lease>;
  /** The watch saw something to act on while no sleep was in progress: the next sleep is skipped. */
  private nudged = false;

  constructor(private readonly options: LeaderElectionOptions) {
    this.identity = options.identity ?? defaultIdentity();
    this.leases = options.client.resource<Lease>(LEASE);
    this.leaseDurationMs = options.leaseDurationMs ?? 15_000;
    this.renewIntervalMs = options.renewIntervalMs ?? 5_000;
    this.renewDeadlineMs = options.renewDeadlineMs ?? Math.floor((this.leaseDurationMs * 2) / 3);
    this.retryIntervalMs = options.retryIntervalMs ?? 2_000;
    if (this.renewIntervalMs >= this.renewDeadlineMs || this.renewDeadlineMs >= this.leaseDurationMs) {
      throw new Error('leader election needs renewInterval < renewDeadline < leaseDuration');
    }
    this.watch = new Informer<Lease>(options.client, LEASE, {
      namespace: options.namespace,
      fieldSelector: `metadata.name=${options.name}`,
      backoffMaxMs: this.retryIntervalMs,
    });
    this.watch.on('add', (lease) => this.onLease(lease));
    this.watch.on('update', (lease) => this.onLease(lease));
    this.watch.on('delete', () => this.nudge());
    this.watch.onError((err) => options.onError?.(err));
  }

  /** A change of the Lease seen by the watch. */
  private onLease(lease: Lease): void {
    const spec = lease.spec ?? {};
    this.observe(spec);
    const holder = spec.holderIdentity ?? '';
    // released (a clean shutdown): take it now; someone else holds it while we lead: step down now
    if ((!this.leading && holder === '') || (this.leading && holder !== this.identity)) this.nudge();
  }

  private nudge(): void {
    this.nudged = true;
    this.sleeper.wake();
  }

  isLeader(): boolean {
    return this.leading;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    void this.watch.start().catch(() => undefined);
    this.loop = this.run();
  }

  /** Stops campaigning; a leader stops leading and, with `release`, frees the Lease for the next one at once. */
  async stop({ release = true }: { release?: boolean } = {}): Promise<void> {
    this.running = false;
    this.sleeper.wake();
    await this.loop;
    await this.watch.stop();
    if (this.leading) {
      await this.loseLeadership();
      if (release) await this.release().catch((err) => this.options.onError?.(err));
    }
  }

  private async run(): Promise<void> {
    while (this.running) {
      this.nudged = false;
      let renewed = false;
      try {
        renewed = await this.tryAcquireOrRenew();
      } catch (err) {
        this.options.onError?.(err);
      }
      if (!this.running) break;
      if (renewed) {
        this.lastRenewal = Date.now();
        if (!this.leading) {
          this.leading = true;
          // Not awaited: renewals must go on while the controllers start.
          void this.callback(this.options.onStartedLeading);
        }
      } else if (this.leading && Date.now() - this.lastRenewal >= this.renewDeadlineMs) {
        void this.loseLeadership();
      } else if (this.leading && this.observed && !this.observed.record.startsWith(`${this.identity}|`)) {
        // Someone else holds the Lease now.
        void this.loseLeadership();
      }
      if (!this.nudged) await this.sleeper.sleep(this.leading && renewed ? this.renewIntervalMs : this.candidateDelayMs());
    }
  }

  /** A candidate (or a leader whose renewal failed) tries again at retryInterval, or sooner when the holder's lease runs out. */
  private candidateDelayMs(): number {
    const observed = this.observed;
    if (this.leading || !observed?.holder || observed.holder === this.identity) return this.retryIntervalMs;
    const expiresInMs = observed.at + observed.durationMs - Date.now();
    return Math.max(1, Math.min(this.retryIntervalMs, expiresInMs + 1));
  }

  private async loseLeadership(): Promise<void> {
    if (!this.leading) return;
    this.leading = false;
    await this.callback(this.options.onStoppedLeading);
  }

  private async callback(fn: () => Promise<void> | void): Promise<void> {
    try {
      await fn();
    } catch (err) {
      this.options.onError?.(err);
    }
  }

  private desiredSpec(current: LeaseSpec | undefined, now: Date): LeaseSpec {
    const ours = current?.holderIdentity === this.identity;
    return {
      holderIdentity: this.identity,
      leaseDurationSeconds: Math.max(1, Math.ceil(this.leaseDurationMs / 1000)),
      acquireTime: ours && current?.acquireTime ? current.acquireTime : microTime(now),
      renewTime: microTime(now),
      leaseTransitions: (current?.leaseTransitions ?? 0) + (ours || !current?.holderIdentity ? 0 : 1),
    };
  }

  /** True when this process holds the Lease after the call. */
  private async tryAcquireOrRenew(): Promise<boolean> {
    const { namespace, name } = this.options;
    const lease = await this.leases.find(namespace, name);
    // stamped after the read: a Lease released while it was read is taken after its release
    const now = new Date();
    if (!lease) {
      try {
        await this.leases.create({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace }, spec: this.desiredSpec(undefined, now) });
        this.observe(this.desiredSpec(undefined, now));
        return true;
      } catch (err) {
        if (isAlreadyExists(err)) return false;
        throw err;
      }
    }
    const spec = lease.spec ?? {};
    this.observe(spec);
    const holder = spec.holderIdentity;
    const durationMs = (spec.leaseDurationSeconds ?? 0) * 1000;
    if (holder && holder !== this.identity && Date.now() - this.observed!.at <= durationMs) return false;
    const next = this.desiredSpec(spec, now);
    try {
      await this.leases.replace({ ...lease, spec: next });
    } catch (err) {
      if (isConflict(err)) return false;
      throw err;
    }
    this.observe(next);
    return true;
  }

  private observe(spec: LeaseSpec): void {
    const record = `${spec.holderIdentity ?? ''}|${spec.renewTime ?? ''}|${spec.leaseTransitions ?? 0}`;
    if (this.observed?.record !== record) {
      this.observed = { record, at: Date.now(), holder: spec.holderIdentity ?? '', durationMs: (spec.leaseDurationSeconds ?? 0) * 1000 };
    }
  }

  private async release(): Promise<void> {
    const { namespace, name } = this.options;
    const lease = await this.leases.find(namespace, name);
    if (!lease || lease.spec?.holderIdentity !== this.identity) return;
    await this.leases.replace({ ...lease, spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: microTime(new Date()) } });
  }
}
