/** A controller: the kind it reconciles, the kinds it owns or watches, and its reconcile function. */
import type { CachedResource, Informer, KubeClient } from '../kube/index.js';
import { ConflictError } from '../kube/index.js';
import type { Logger } from '../lib/log.js';
import { apiVersionOf, type KubeObject, type ResourceType } from '../resources/index.js';
import { operatorMetrics, trackQueueDepth } from '../lib/metrics.js';
import { passes, type Predicate } from './predicates.js';
import { WorkQueue, type WorkResult } from './workqueue.js';

export interface ObjectKey {
  namespace: string;
  name: string;
}

export function formatKey(key: ObjectKey): string {
  return key.namespace ? `${key.namespace}/${key.name}` : key.name;
}

export function parseKey(key: string): ObjectKey {
  const slash = key.indexOf('/');
  return slash < 0 ? { namespace: '', name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

export interface ReconcileContext {
  client: KubeClient;
  /** The shared cache of a type this controller reconciles, owns or watches. */
  informer<T extends KubeObject>(type: ResourceType): Informer<T>;
  /** The typed handle of a kind: cached reads (get, list, byIndex, ownedBy, withLabel), client writes. */
  resource<T extends KubeObject>(type: ResourceType): CachedResource<T>;
  /** Aborted when the manager loses the Lease or stops: long work (a fetch, a wait) ends early, nothing is written after. */
  signal: AbortSignal;
  /** Bound to the controller (or runnable) and, in a reconcile, the object key. */
  log: Logger;
}

export type ReconcileResult = WorkResult;

/**
 * Something outside the cluster that names keys to reconcile now (controller-runtime's
 * source.Channel), e.g. a sandbox process that exited. Subscribed while the controller runs;
 * `subscribe` returns how to unsubscribe.
 */
export interface ExternalSource {
  subscribe(enqueue: (key: ObjectKey) => void): () => void;
}

export interface ControllerDefinition {
  name: string;
  /** The kind reconciled: each of its objects is a key. */
  for: ResourceType;
  /** Kinds whose objects point at their owner (of the `for` kind) with a controller ownerReference. */
  owns?: ResourceType[];
  /**
   * Other kinds, mapped to the keys they affect (`ctx` reads the caches, e.g. every queued object
   * of a namespace). `predicates` filter their update events as for the `for` kind.
   */
  watches?: { type: ResourceType; map: (obj: KubeObject, ctx: ReconcileContext) => ObjectKey[]; predicates?: Predicate[] }[];
  /** Non-cluster events that enqueue keys. */
  sources?: ExternalSource[];
  /** Keys reconciled at once (default 1; a key never runs twice at once). */
  concurrency?: number;
  /** Filters update events of the `for` kind (all must pass); adds, deletes and deletion starts always run. */
  predicates?: Predicate[];
  /** Makes the world match the object named by `key` (which may be gone). Throw to retry with backoff. */
  reconcile(key: ObjectKey, ctx: ReconcileContext): Promise<ReconcileResult | void>;
}

/** Keys of the `owner` kind that `obj` names as its controller. */
export function ownerKeys(obj: KubeObject, owner: ResourceType): ObjectKey[] {
  const apiVersion = apiVersionOf(owner);
  return (obj.metadata.ownerReferences ?? [])
    .filter((ref) => ref.controller && ref.kind === owner.kind && ref.apiVersion === apiVersion)
    .map((ref) => ({ namespace: obj.metadata.namespace ?? '', name: ref.name }));
}

/** A controller while its manager leads: a work queue fed by informer events. */
export class RunningController {
  readonly queue: WorkQueue;
  private readonly unsubscribers: (() => void)[];

  constructor(
    readonly definition: ControllerDefinition,
    ctx: ReconcileContext,
    onError: (controller: string, key: string, err: unknown) => void,
  ) {
    const metrics = operatorMetrics();
    const controller = definition.name;
    const log = ctx.log.with({ controller });
    this.queue = new WorkQueue(async (key) => {
      const done = metrics.reconcileDuration.startTimer({ controller });
      try {
        const result = await definition.reconcile(parseKey(key), { ...ctx, log: log.with({ object: key }) });
        metrics.reconciles.inc({ controller, result: result?.requeueAfter !== undefined ? 'requeue' : 'success' });
        return result;
      } catch (err) {
        metrics.reconciles.inc({ controller, result: err instanceof ConflictError ? 'conflict' : 'error' });
        throw err;
      } finally {
        done();
      }
    }, {
      concurrency: definition.concurrency,
      onError: (key, err) => {
        // someone else wrote first: the retry reads the new version; not worth an error line
        if (err instanceof ConflictError) log.debug('conflict, retrying', { object: key, error: err.message });
        else onError(definition.name, key, err);
      },
      onStart: (_key, waitedMs) => metrics.queueLatency.observe({ controller }, waitedMs / 1000),
    });
    const enqueue = (keys: ObjectKey[]) => keys.forEach((k) => this.queue.add(formatKey(k)));
    const own = (obj: KubeObject): ObjectKey[] => [{ namespace: obj.metadata.namespace ?? '', name: obj.metadata.name ?? '' }];
    this.subscribe(ctx.informer(definition.for), own, enqueue, definition.predicates);
    for (const owned of definition.owns ?? []) this.subscribe(ctx.informer(owned), (obj) => ownerKeys(obj, definition.for), enqueue);
    for (const watch of definition.watches ?? []) this.subscribe(ctx.informer(watch.type), (obj) => watch.map(obj, ctx), enqueue, watch.predicates);
    this.unsubscribers = (definition.sources ?? []).map((source) => source.subscribe((key) => enqueue([key])));
  }

  private subscribe(
    informer: Informer<KubeObject>, map: (obj: KubeObject) => ObjectKey[], enqueue: (keys: ObjectKey[]) => void, predicates?: Predicate[],
  ): void {
    informer.on('add', (obj) => enqueue(map(obj)));
    informer.on('update', (obj, old) => {
      if (passes(predicates, obj, old)) enqueue([...map(obj), ...(old ? map(old) : [])]);
    });
    informer.on('delete', (obj) => enqueue(map(obj)));
  }

  start(): void {
    trackQueueDepth(this.definition.name, () => this.queue.length);
    this.queue.start();
  }

  /** The keys being reconciled now (a stop waits for them). */
  inFlight(): string[] {
    return this.queue.inFlightKeys();
  }

  stop(): Promise<void> {
    for (const unsubscribe of this.unsubscribers.splice(0)) unsubscribe();
    trackQueueDepth(this.definition.name, undefined);
    return this.queue.stop();
  }
}
