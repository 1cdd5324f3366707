// The few API calls a node makes (list/watch its Pods, read Secrets and ConfigMaps, write Pod
// status and Events), over HTTPS with a bearer token like any client: the simulator may run in
// another process than the cluster.
import { EventCorrelator } from '../../lib/event-correlator.js';
import { clusterFetch, type ClusterAccess, type ClusterFetch } from '../client.js';
import type { KObject } from '../status.js';

export class NodeApiError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

export type WatchEvent = { type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR'; object: KObject };

export class NodeApi {
  /** Repeated Events (BackOff, Unhealthy, ...) are counted on one Event, as the kubelet's recorder does. */
  private readonly events: EventCorrelator;
  private readonly fetch: ClusterFetch;

  constructor(access: ClusterAccess, component: string) {
    this.fetch = clusterFetch(access);
    this.events = new EventCorrelator({
      create: async (event) => { await this.call('POST', `/api/v1/namespaces/${encodeURIComponent(event.metadata.namespace ?? 'default')}/events`, event); },
      patch: async (namespace, name, patch) => {
        try {
          await this.call('PATCH', `/api/v1/namespaces/${encodeURIComponent(namespace ?? 'default')}/events/${encodeURIComponent(name)}`, patch, 'application/merge-patch+json');
          return true;
        } catch (err) {
          if (err instanceof NodeApiError && err.status === 404) return false;
          throw err;
        }
      },
    }, { component });
  }

  private async call<T>(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<T> {
    const res = await this.fetch(path, {
      method,
      headers: { accept: 'application/json', ...(body === undefined ? {} : { 'content-type': contentType }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    if (!res.ok) throw new NodeApiError(res.status, `${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /** undefined when absent */
  async find(path: string): Promise<KObject | undefined> {
    try {
      return await this.call<KObject>('GET', path);
    } catch (err) {
      if (err instanceof NodeApiError && err.status === 404) return undefined;
      throw err;
    }
  }

  list(path: string): Promise<{ items: KObject[]; metadata: { resourceVersion: string } }> {
    return this.call('GET', path);
  }

  /** Decoded data of a Secret (base64) or a ConfigMap, undefined when it does not exist. */
  async configData(namespace: string, kind: 'secrets' | 'configmaps', name: string): Promise<Record<string, string> | undefined> {
    const obj = await this.find(`/api/v1/namespaces/${encodeURIComponent(namespace)}/${kind}/${encodeURIComponent(name)}`);
    if (!obj) return undefined;
    const data = (obj.data ?? {}) as Record<string, string>;
    if (kind === 'configmaps') return { ...data };
    const decoded: Record<string, string> = {};
    for (const [k, v] of Object.entries(data)) decoded[k] = Buffer.from(v, 'base64').toString('utf8');
    for (const [k, v] of Object.entries((obj.stringData ?? {}) as Record<string, string>)) decoded[k] = v;
    return decoded;
  }

  /** Replaces the Pod's status (merge patch of the whole status: lists are replaced). */
  async patchPodStatus(namespace: string, name: string, uid: string, status: Record<string, unknown>): Promise<void> {
    const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}/status`;
    // a pod re-created under the same name is another pod: the uid keeps our write off it
    await this.call('PATCH', path, { metadata: { uid }, status }, 'application/merge-patch+json');
  }

  /**
   * The pod's finalizers with this node's (`present`) or without it: a pod the node runs stays,
   * marked for deletion, until the node has stopped it (the kubelet's part in a graceful delete).
   * The uid keeps the write off a pod re-created under the same name.
   */
  async setPodFinalizer(pod: KObject, finalizer: string, present: boolean): Promise<void> {
    const meta = pod.metadata ?? {};
    const others = (meta.finalizers ?? []).filter((f) => f !== finalizer);
    const path = `/api/v1/namespaces/${encodeURIComponent(meta.namespace ?? 'default')}/pods/${encodeURIComponent(meta.name ?? '')}`;
    try {
      await this.call('PATCH', path, { metadata: { uid: meta.uid, finalizers: present ? [...others, finalizer] : others } }, 'application/merge-patch+json');
    } catch (err) {
      if (!(err instanceof NodeApiError && (err.status === 404 || err.status === 409))) throw err; // gone, or another pod now
    }
  }

  async event(pod: KObject, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
    const meta = pod.metadata ?? {};
    await this.events.record({ apiVersion: 'v1', kind: 'Pod', name: meta.name, namespace: meta.namespace ?? 'default', uid: meta.uid }, { type, reason, message });
  }

  /** Watch events until the server ends the stream or `signal` aborts. */
  async *watch(path: string, signal: AbortSignal): AsyncGenerator<WatchEvent> {
    const res = await this.fetch(path, { headers: { accept: 'application/json' }, signal });
    if (!res.ok || !res.body) throw new NodeApiError(res.status, `watch ${path}: ${res.status}`);
    const decoder = new TextDecoder();
    let buffered = '';
    for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
      buffered += decoder.decode(chunk, { stream: true });
      let newline: number;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline).trim();
        buffered = buffered.slice(newline + 1);
        if (line) yield JSON.parse(line) as WatchEvent;
      }
    }
  }
}
