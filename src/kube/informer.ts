/**
 * A list-watch cache of one resource type that never gives up. client-node's own informer
 * recovers from 410 only; this one also backs off and retries after any other error (watching
 * again from its resourceVersion, relisting when that is too old), and relists periodically to
 * repair whatever a silent watch might have missed.
 */
import { Watch } from '@kubernetes/client-node';
import type { KubeObject, ResourceType } from '../resources/index.js';
import { Backoff, Sleeper } from './backoff.js';
import type { KubeClient, ListOptions, ResourceClient } from './client.js';
import { resourcePath } from './client.js';
import { classifyError, errorFromResponse, type KubeError } from './errors.js';

export type InformerEvent = 'add' | 'update' | 'delete';
export type InformerHandler<T> = (obj: T, old?: T) => void;
/** The index values of an object (none, one or several). */
export type IndexFunction<T> = (obj: T) => readonly (string | undefined)[];

/** Built-in index: the uid of every owner an object names in ownerReferences. */
export const OWNER_UID_INDEX = 'owner-uid';
/** Built-in index: metadata.uid. */
export const UID_INDEX = 'uid';

const ownerUids = (obj: KubeObject) => (obj.metadata.ownerReferences ?? []).map((ref) => ref.uid);

export interface InformerOptions extends ListOptions {
  /** Watch one namespace; all namespaces when absent. */
  namespace?: string;
  /** Full relist period (default 5 minutes). */
  relistIntervalMs?: number;
  backoffInitialMs?: number;
  backoffMaxMs?: number;
}

export function objectKey(obj: KubeObject): string {
  const { namespace, name } = obj.metadata;
  return namespace ? `${namespace}/${name}` : `${name}`;
}

interface WatchEvent {
  type?: string;
  object?: KubeObject & { code?: number; message?: string };
}

/** Counters of what the list-watch loop did (for metrics and tests). */
export interface InformerStats {
  lists: number;
  watches: number;
  /** Watches refused because their resourceVersion was too old (410): each leads to a relist. */
  expired: number;
  /** Errors that led to a backoff. */
  errors: number;
}

export class Informer<T extends KubeObject> {
  readonly stats: InformerStats = { lists: 0, watches: 0, expired: 0, errors: 0 };
  private readonly cache = new Map<string, T>();
  /** index name -> its function and value -> object keys */
  private readonly indexes = new Map<string, { keys: IndexFunction<T>; entries: Map<string, Set<string>> }>();
  private readonly handlers: Record<InformerEvent, InformerHandler<T>[]> = { add: [], update: [], delete: [] };
  private readonly errorHandlers: ((err: KubeError) => void)[] = [];
  private readonly backoff: Backoff;
  private readonly watcher: Watch;
  private readonly resources: ResourceClient<T>;
  private resourceVersion = '';
  private needsList = true;
  private running = false;
  private synced = false;
  private abortWatch?: () => void;
  private relistTimer?: NodeJS.Timeout;
  private readonly sleeper = new Sleeper();
  private loop?: Promise<void>;
  private syncWaiters: (() => void)[] = [];

  constructor(
    private readonly client: KubeClient,
    readonly type: ResourceType,
    private readonly options: InformerOptions = {},
  ) {
    this.backoff = new Backoff(options.backoffInitialMs ?? 200, options.backoffMaxMs ?? 30_000);
    this.watcher = new Watch(client.config.kc);
    this.resources = client.resource<T>(type);
    this.addIndex(OWNER_UID_INDEX, ownerUids);
    this.addIndex(UID_INDEX, (obj) => [obj.metadata.uid]);
  }

  /** Adds an index (a second call with the same name keeps the first); built from the cache at once. */
  addIndex(name: string, keys: IndexFunction<T>): void {
    if (this.indexes.has(name)) return;
    this.indexes.set(name, { keys, entries: new Map() });
    for (const [key, obj] of this.cache) this.indexAdd(name, key, obj);
  }

  hasIndex(name: string): boolean {
    return this.indexes.has(name);
  }

  /** Cached objects whose index `name` has `value` (an unknown index is an error: add it first). */
  byIndex(name: string, value: string): T[] {
    const index = this.indexes.get(name);
    if (!index) throw new Error(`informer ${this.type.plural} has no index ${name}`);
    return [...(index.entries.get(value) ?? [])].map((key) => this.cache.get(key)!);
  }

  private indexAdd(name: string, key: string, obj: T): void {
    const index = this.indexes.get(name)!;
    for (const value of index.keys(obj)) {
      if (value === undefined) continue;
      let keys = index.entries.get(value);
      if (!keys) index.entries.set(value, (keys = new Set()));
      keys.add(key);
    }
  }

  private indexRemove(key: string, obj: T): void {
    for (const index of this.indexes.values()) {
      for (const value of index.keys(obj)) {
        if (value === undefined) continue;
        const keys = index.entries.get(value);
        keys?.delete(key);
        if (keys?.size === 0) index.entries.delete(value);
      }
    }
  }

  private store(key: string, obj: T): void {
    const old = this.cache.get(key);
    if (old) this.indexRemove(key, old);
    this.cache.set(key, obj);
    for (const name of this.indexes.keys()) this.indexAdd(name, key, obj);
  }

  private forget(key: string): void {
    const old = this.cache.get(key);
    if (!old) return;
    this.indexRemove(key, old);
    this.cache.delete(key);
  }

  on(event: InformerEvent, handler: InformerHandler<T>): void {
    this.handlers[event].push(handler);
  }

  onError(handler: (err: KubeError) => void): void {
    this.errorHandlers.push(handler);
  }

  get(namespace: string | undefined, name: string): T | undefined {
    return this.cache.get(namespace ? `${namespace}/${name}` : name);
  }

  list(namespace?: string): T[] {
    const all = [...this.cache.values()];
    return namespace === undefined ? all : all.filter((o) => o.metadata.namespace === namespace);
  }

  hasSynced(): boolean {
    return this.synced;
  }

  /** Starts the list-watch loop; resolves once the first list is in the cache. */
  async start(): Promise<void> {
    if (this.running) return this.waitForSync();
    this.running = true;
    this.loop = this.run();
    const every = this.options.relistIntervalMs ?? 300_000;
    this.relistTimer = setInterval(() => this.requestRelist(), every);
    this.relistTimer.unref();
    return this.waitForSync();
  }

  async stop(): Promise<void> {
    this.running = false;
    clearInterval(this.relistTimer);
    this.abortWatch?.();
    this.sleeper.wake();
    await this.loop;
    for (const resolve of this.syncWaiters.splice(0)) resolve();
  }

  /** Relist now (the periodic relist does the same). */
  requestRelist(): void {
    this.needsList = true;
    this.abortWatch?.();
    this.sleeper.wake();
  }

  private waitForSync(): Promise<void> {
    if (this.synced) return Promise.resolve();
    return new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  private async run(): Promise<void> {
    while (this.running) {
      try {
        if (this.needsList) await this.relist();
        const started = Date.now();
        await this.watchOnce();
        // A watch that the server ends at once (without error) must not spin.
        if (Date.now() - started < 1000 && this.running && !this.needsList) await this.sleeper.sleep(this.backoff.next());
        else this.backoff.reset();
      } catch (err) {
        if (!this.running) break;
        const error = classifyError(err, `watch ${this.type.plural}`);
        if (error.reason === 'Gone') {
          // Our resourceVersion left the server's history: only a relist can catch up.
          this.stats.expired++;
          this.needsList = true;
          continue;
        }
        // Any other failure: back off, then watch again from where we were (a 410 then
        // relists); a failed list is retried as a list.
        this.stats.errors++;
        for (const handler of this.errorHandlers) handler(error);
        await this.sleeper.sleep(this.backoff.next());
      }
    }
  }

  private async relist(): Promise<void> {
    const { namespace, labelSelector, fieldSelector } = this.options;
    this.stats.lists++;
    const list = await this.resources.list(namespace, { labelSelector, fieldSelector });
    const fresh = new Map(list.items.map((obj) => [objectKey(obj), obj]));
    for (const [key, old] of this.cache) {
      if (!fresh.has(key)) {
        this.forget(key);
        this.emit('delete', old);
      }
    }
    for (const obj of list.items) this.upsert(obj);
    this.resourceVersion = list.resourceVersion;
    this.needsList = false;
    if (!this.synced) {
      this.synced = true;
      for (const resolve of this.syncWaiters.splice(0)) resolve();
    }
  }

  private upsert(obj: T): void {
    const key = objectKey(obj);
    const old = this.cache.get(key);
    if (old && old.metadata.resourceVersion === obj.metadata.resourceVersion) return;
    this.store(key, obj);
    if (old) this.emit('update', obj, old);
    else this.emit('add', obj);
  }

  private emit(event: InformerEvent, obj: T, old?: T): void {
    for (const handler of this.handlers[event]) {
      try {
        handler(obj, old);
      } catch (err) {
        for (const onError of this.errorHandlers) onError(classifyError(err, `${event} handler of ${this.type.plural}`));
      }
    }
  }

  /** One watch request from the current resourceVersion; resolves when it ends normally. */
  private watchOnce(): Promise<void> {
    const { namespace, labelSelector, fieldSelector } = this.options;
    const params: Record<string, string | boolean> = { resourceVersion: this.resourceVersion, allowWatchBookmarks: true };
    if (labelSelector) params.labelSelector = labelSelector;
    if (fieldSelector) params.fieldSelector = fieldSelector;
    this.stats.watches++;
    return new Promise<void>((resolve, reject) => {
      let aborted = false;
      let controller: AbortController | undefined;
      let failure: Error | undefined;
      this.abortWatch = () => {
        aborted = true;
        controller?.abort();
        resolve();
      };
      const onEvent = (type: string, object: WatchEvent['object']) => {
        if (!object) return;
        if (type === 'ERROR') {
          failure = errorFromResponse(object.code ?? 500, object, `watch ${this.type.plural}`);
          controller?.abort();
          return;
        }
        const rv = object.metadata?.resourceVersion;
        if (type === 'ADDED' || type === 'MODIFIED') this.upsert(this.resources.decode(object as T));
        else if (type === 'DELETED') {
          const key = objectKey(object);
          const old = this.cache.get(key);
          if (old) {
            this.forget(key);
            this.emit('delete', object as T);
          }
        }
        if (rv) this.resourceVersion = rv;
      };
      const onDone = (err: unknown) => {
        this.abortWatch = undefined;
        if (aborted) return resolve();
        if (failure) return reject(failure);
        if (err) return reject(err);
        resolve();
      };
      this.watcher
        .watch(resourcePath(this.type, namespace), params, onEvent, onDone)
        .then((c) => {
          controller = c;
          if (aborted || failure) c.abort();
        })
        .catch(onDone);
    });
  }
}
