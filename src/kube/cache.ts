/**
 * Cached, typed resources: a KubeCache holds one Informer per type (shared by everything in a
 * process or a manager), and a CachedResource<T> is the handle per kind: reads from the cache
 * (get, list, by index, owned by, with label), writes through the client (create, merge-patch,
 * status, delete). A write refused for a stale resourceVersion throws ConflictError.
 */
import { controllerOf, type KubeObject, type ObjectIndex, type ResourceType } from '../resources/index.js';
import type { DeleteOptions, KubeClient, ResourceClient } from './client.js';
import { ConflictError, isConflict, isNotFound, type KubeError } from './errors.js';
import { Informer, OWNER_UID_INDEX, UID_INDEX } from './informer.js';

export interface KubeCacheOptions {
  /** Watch one namespace; all when absent. */
  namespace?: string;
  /** Informer relist period (default 5 minutes). */
  relistIntervalMs?: number;
  onError?: (type: ResourceType, err: KubeError) => void;
}

const typeId = (type: ResourceType) => `${type.plural}.${type.group}/${type.version}${type.labelSelector ? `?${type.labelSelector}` : ''}`;
const labelIndex = (key: string) => `label:${key}`;

export class CachedResource<T extends KubeObject> {
  constructor(
    readonly informer: Informer<T>,
    readonly client: ResourceClient<T>,
  ) {}

  get type(): ResourceType { return this.client.type; }

  get(namespace: string | undefined, name: string): T | undefined {
    return this.informer.get(namespace, name);
  }

  /** One namespace, or all the cache holds. */
  list(namespace?: string): T[] {
    return this.informer.list(namespace);
  }

  byIndex(index: string, value: string): T[] {
    return this.informer.byIndex(index, value);
  }

  /** Objects `index` finds under `value` (the index is added on first use). */
  indexed(index: ObjectIndex<T>, value: string): T[] {
    if (!this.informer.hasIndex(index.name)) this.informer.addIndex(index.name, (obj) => index.keys(obj));
    return this.informer.byIndex(index.name, value);
  }

  byUid(uid: string): T | undefined {
    return this.informer.byIndex(UID_INDEX, uid)[0];
  }

  /** Objects whose controller ownerReference points at `owner` (by uid). */
  ownedBy(owner: KubeObject): T[] {
    const uid = owner.metadata.uid;
    if (!uid) return [];
    return this.informer.byIndex(OWNER_UID_INDEX, uid).filter((obj) => controllerOf(obj)?.uid === uid);
  }

  /** Objects labelled `key=value` (the label index is added on first use). */
  withLabel(key: string, value: string, namespace?: string): T[] {
    const index = labelIndex(key);
    if (!this.informer.hasIndex(index)) this.informer.addIndex(index, (obj) => [obj.metadata.labels?.[key]]);
    const found = this.informer.byIndex(index, value);
    return namespace === undefined ? found : found.filter((obj) => obj.metadata.namespace === namespace);
  }

  create(obj: T): Promise<T> {
    return this.client.create(obj);
  }

  mergePatch(namespace: string, name: string, patch: object): Promise<T> {
    return withConflictError(`patch ${this.type.kind} ${namespace}/${name}`, () => this.client.mergePatch(namespace, name, patch));
  }

  /** PUT /status with obj's resourceVersion (the runtime's status gate decides whether to call it). */
  replaceStatus(obj: T): Promise<T> {
    return withConflictError(`write status of ${this.type.kind} ${obj.metadata.namespace}/${obj.metadata.name}`, () => this.client.replaceStatus(obj));
  }

  /** Deletes this exact object (uid precondition); already gone is fine. */
  async delete(obj: T, options: Omit<DeleteOptions, 'uid'> = {}): Promise<void> {
    try {
      await this.client.delete(obj.metadata.namespace ?? '', obj.metadata.name!, { ...options, uid: obj.metadata.uid });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }
}

/** Runs a write; a 409 Conflict (stale resourceVersion) leaves as ConflictError naming `what`. */
export async function withConflictError<R>(what: string, write: () => Promise<R>): Promise<R> {
  try {
    return await write();
  } catch (error) {
    if (isConflict(error) && !(error instanceof ConflictError)) throw new ConflictError(what, error as KubeError);
    throw error;
  }
}

/** One informer per type, created on first use; started together, or at once when the cache already runs. */
export class KubeCache {
  private readonly informers = new Map<string, Informer<KubeObject>>();
  private started = false;

  constructor(
    readonly client: KubeClient,
    private readonly options: KubeCacheOptions = {},
  ) {}

  informer<T extends KubeObject>(type: ResourceType): Informer<T> {
    const id = typeId(type);
    let informer = this.informers.get(id);
    if (!informer) {
      informer = new Informer(this.client, type, { namespace: this.options.namespace, relistIntervalMs: this.options.relistIntervalMs, labelSelector: type.labelSelector });
      const onError = this.options.onError;
      if (onError) informer.onError((err) => onError(type, err));
      this.informers.set(id, informer);
      if (this.started) void informer.start();
    }
    return informer as unknown as Informer<T>;
  }

  resource<T extends KubeObject>(type: ResourceType): CachedResource<T> {
    return new CachedResource(this.informer<T>(type), this.client.resource<T>(type));
  }

  /** Starts every informer asked for so far (and later ones at once); resolves when all have synced. */
  async start(): Promise<void> {
    this.started = true;
    await Promise.all([...this.informers.values()].map((i) => i.start()));
  }

  /** Stops every informer without waiting for a start in progress to sync. */
  async stop(): Promise<void> {
    this.started = false;
    await Promise.all([...this.informers.values()].map((i) => i.stop()));
  }

  hasSynced(): boolean {
    return [...this.informers.values()].every((i) => i.hasSynced());
  }
}
