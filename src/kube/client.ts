/**
 * The typed client port: one ResourceClient per resource type (custom or built-in), over the
 * Kubernetes REST protocol with client-node's authentication. Objects are plain JSON;
 * svc.dev objects come back with their schema defaults applied.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import {
  apiVersionOf,
  EVENT,
  GROUP,
  POD,
  withDefaults,
  type KubeObject,
  type ResourceType,
} from '../resources/index.js';
import { EventCorrelator, type CoreEvent } from '../lib/event-correlator.js';
import type { ClusterConfig } from './config.js';
import { classifyError, errorFromResponse, isNotFound } from './errors.js';

export const MERGE_PATCH = 'application/merge-patch+json';
export const JSON_PATCH = 'application/json-patch+json';

export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
}

export interface ObjectList<T> {
  items: T[];
  resourceVersion: string;
}

export interface DeleteOptions {
  propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
  /** Delete only this exact object (uid precondition). */
  uid?: string;
}

/** CRUD on one resource type. `namespace` is ignored for cluster-scoped types. */
export interface ResourceClient<T extends KubeObject> {
  readonly type: ResourceType;
  /** An object as reads return it (svc.dev kinds: schema defaults applied). */
  decode(obj: T): T;
  get(namespace: string, name: string): Promise<T>;
  /** get, with NotFound as undefined. */
  find(namespace: string, name: string): Promise<T | undefined>;
  /** One namespace, or all namespaces when `namespace` is undefined. */
  list(namespace?: string, options?: ListOptions): Promise<ObjectList<T>>;
  create(obj: T): Promise<T>;
  /** PUT; the object's metadata.resourceVersion makes a stale write a Conflict. */
  replace(obj: T): Promise<T>;
  /** PATCH with application/merge-patch+json. */
  mergePatch(namespace: string, name: string, patch: object): Promise<T>;
  /** PUT /status (only status changes are kept); resourceVersion as for replace. */
  replaceStatus(obj: T): Promise<T>;
  /** PATCH /status with application/merge-patch+json. */
  mergePatchStatus(namespace: string, name: string, patch: object): Promise<T>;
  delete(namespace: string, name: string, options?: DeleteOptions): Promise<void>;
}

export interface EventInput {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

export interface RawResponse {
  status: number;
  body: string;
}

/** How long an idle connection to the API server is kept (below the servers' idle timeouts: kube-apiserver 90 s, the local cluster 65 s). */
const IDLE_CONNECTION_MS = 30_000;

/**
 * How long the credentials and TLS options read from the kubeconfig are reused before they are
 * read again (a rotated service-account token or certificate is picked up within this, plus the
 * minute client-node's token-file reader keeps a token); a 401 reads them again at once.
 */
const CREDENTIALS_REUSE_MS = 10_000;

/** The TLS identity of a request's options: requests with the same one share connections. */
function tlsIdentity(options: https.RequestOptions): string {
  const hash = createHash('sha256');
  for (const part of [options.ca, options.cert, options.key, options.pfx, options.passphrase, options.servername, options.rejectUnauthorized]) hash.update(`${String(part ?? '')}\0`);
  return hash.digest('hex');
}

export class KubeClient {
  private eventCorrelator?: EventCorrelator;
  /** Keep-alive agents by TLS identity (client-node makes a new Agent, so a new TLS handshake, for every request). */
  private readonly agents = new Map<string, http.Agent>();
  /** The options of the last read of the kubeconfig (client-node reads files and makes an Agent on every call). */
  private prepared?: { readonly at: number; readonly options: Promise<https.RequestOptions> };

  constructor(
    readonly config: ClusterConfig,
    /** Name written as the Event source. */
    readonly component = 'svc',
    /** A request without an answer for this long fails as Unavailable. */
    readonly requestTimeoutMs = 30_000,
  ) {}

  /** One HTTP request to the API server; no error handling beyond the transport. */
  async raw(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<RawResponse> {
    const kept = this.prepared?.options;
    const prepared = this.preparedOptions();
    const res = await this.send(await prepared, method, path, body, contentType);
    // refused with credentials read before this request: they may have changed since (a rotated
    // service-account token, an exec plugin's new token); read them again and send once more.
    // Credentials read for this request are not read twice.
    if (res.status !== 401 || prepared !== kept) return res;
    if (this.prepared?.options === prepared) this.prepared = undefined;
    return this.send(await this.preparedOptions(), method, path, body, contentType);
  }

  private send(prepared: https.RequestOptions, method: string, path: string, body: unknown, contentType: string): Promise<RawResponse> {
    const url = new URL(this.config.server + path);
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers = { ...prepared.headers, Accept: 'application/json', ...(payload === undefined ? {} : { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(payload) }) };
    const options: https.RequestOptions = { ...prepared, method, headers };
    const transport = url.protocol === 'https:' ? https : http;
    const send = (): Promise<RawResponse> => new Promise((resolve, reject) => {
      const req = transport.request(url, options, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.setTimeout(this.requestTimeoutMs, () => req.destroy(new Error(`no answer within ${this.requestTimeoutMs} ms`)));
      req.on('error', (error: NodeJS.ErrnoException) => {
        // a kept-alive connection the server closed just as it was reused: the request never reached it
        if (req.reusedSocket && error.code === 'ECONNRESET') send().then(resolve, reject);
        else reject(error);
      });
      req.end(payload);
    });
    return send();
  }

  /** The kubeconfig's credentials and TLS options, read at most every CREDENTIALS_REUSE_MS. */
  private preparedOptions(): Promise<https.RequestOptions> {
    const now = Date.now();
    if (this.prepared && now - this.prepared.at < CREDENTIALS_REUSE_MS) return this.prepared.options;
    const options = this.prepareOptions();
    const prepared = { at: now, options };
    this.prepared = prepared;
    // a failed read (a token file not there yet) is not kept: the next request reads again
    options.catch(() => { if (this.prepared === prepared) this.prepared = undefined; });
    return options;
  }

  /** Credentials, TLS options and the connection pool every request carries. */
  private async prepareOptions(): Promise<https.RequestOptions> {
    const options: https.RequestOptions = {};
    await this.config.kc.applyToHTTPSOptions(options);
    const protocol = new URL(this.config.server).protocol;
    if (protocol === 'http:' && options.agent instanceof https.Agent) delete options.agent;
    // connections are reused (keep-alive) unless a proxy agent is configured
    if (!this.config.kc.getCurrentCluster()?.proxyUrl) options.agent = this.agentFor(protocol, options);
    return options;
  }

  private agentFor(protocol: string, options: https.RequestOptions): http.Agent {
    const key = `${protocol}${tlsIdentity(options)}`;
    let agent = this.agents.get(key);
    if (!agent) {
      const common = { keepAlive: true, timeout: IDLE_CONNECTION_MS };
      agent = protocol === 'https:'
        ? new https.Agent({ ...common, ca: options.ca, cert: options.cert, key: options.key, pfx: options.pfx, passphrase: options.passphrase, servername: options.servername, ...(options.rejectUnauthorized !== undefined ? { rejectUnauthorized: options.rejectUnauthorized } : {}) })
        : new http.Agent(common);
      this.agents.set(key, agent);
    }
    return agent;
  }

  /** A JSON request; a non-2xx answer throws a classified KubeError. */
  async request<R>(method: string, path: string, what: string, body?: unknown, contentType?: string): Promise<R> {
    let res: RawResponse;
    try {
      res = await this.raw(method, path, body, contentType);
    } catch (err) {
      throw classifyError(err, what);
    }
    if (res.status < 200 || res.status >= 300) throw errorFromResponse(res.status, res.body, what);
    return (res.body ? JSON.parse(res.body) : undefined) as R;
  }

  /**
   * A Pod's log (`pods/log`, text): the last `tailLines` of a container's current run, or of
   * its previous run. Undefined when the Pod or its log does not exist (NotFound, or the
   * BadRequest a node answers for a container that never ran).
   */
  async podLog(namespace: string, name: string, options: { container?: string; tailLines?: number; previous?: boolean } = {}): Promise<string | undefined> {
    const what = `read the log of pod ${namespace}/${name}`;
    const path = resourcePath(POD, namespace, name, 'log') + query({
      container: options.container, tailLines: options.tailLines?.toString(), previous: options.previous ? 'true' : undefined,
    });
    let res: RawResponse;
    try {
      res = await this.raw('GET', path);
    } catch (err) {
      throw classifyError(err, what);
    }
    if (res.status === 404 || res.status === 400) return undefined;
    if (res.status < 200 || res.status >= 300) throw errorFromResponse(res.status, res.body, what);
    return res.body;
  }

  resource<T extends KubeObject>(type: ResourceType): ResourceClient<T> {
    return new RestResourceClient<T>(this, type);
  }

  /**
   * Records a core/v1 Event about `obj`, as `kubectl describe` shows it. Repeats are counted on
   * the Event already written and many similar ones combined (src/lib/event-correlator.ts).
   */
  async recordEvent(obj: KubeObject, event: EventInput): Promise<void> {
    const { name, namespace, uid, resourceVersion } = obj.metadata;
    this.eventCorrelator ??= new EventCorrelator(this.eventSink(), { component: this.component });
    await this.eventCorrelator.record({ apiVersion: obj.apiVersion, kind: obj.kind, name, namespace, uid, resourceVersion }, event);
  }

  private eventSink() {
    const events = this.resource<KubeObject>(EVENT);
    return {
      create: async (event: CoreEvent) => { await events.create(event as unknown as KubeObject); },
      async patch(namespace: string | undefined, name: string, patch: Partial<CoreEvent>) {
        try {
          await events.mergePatch(namespace ?? '', name, patch);
          return true;
        } catch (err) {
          if (isNotFound(err)) return false;
          throw err;
        }
      },
    };
  }
}

/** REST path of a resource collection, or of one object when `name` is given. */
export function resourcePath(type: ResourceType, namespace?: string, name?: string, subresource?: string): string {
  const base = type.group ? `/apis/${type.group}/${type.version}` : `/api/${type.version}`;
  const scope = type.namespaced && namespace ? `${base}/namespaces/${encodeURIComponent(namespace)}` : base;
  let path = `${scope}/${type.plural}`;
  if (name !== undefined) path += `/${encodeURIComponent(name)}`;
  if (subresource) path += `/${subresource}`;
  return path;
}

function query(params: Record<string, string | undefined>): string {
  const entries = Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== '');
  return entries.length ? `?${new URLSearchParams(entries).toString()}` : '';
}

class RestResourceClient<T extends KubeObject> implements ResourceClient<T> {
  readonly decode: (obj: T) => T;

  constructor(
    private readonly client: KubeClient,
    readonly type: ResourceType,
  ) {
    this.decode = type.group === GROUP ? (obj) => withDefaults(obj) : (obj) => obj;
  }

  private what(verb: string, namespace?: string, name?: string): string {
    const id = [namespace, name].filter(Boolean).join('/');
    return `${verb} ${this.type.kind}${id ? ` ${id}` : ''}`;
  }

  private complete(obj: T): T {
    return { ...obj, apiVersion: obj.apiVersion ?? apiVersionOf(this.type), kind: obj.kind ?? this.type.kind };
  }

  async get(namespace: string, name: string): Promise<T> {
    return this.decode(await this.client.request<T>('GET', resourcePath(this.type, namespace, name), this.what('get', namespace, name)));
  }

  async find(namespace: string, name: string): Promise<T | undefined> {
    try {
      return await this.get(namespace, name);
    } catch (err) {
      if (classifyError(err).reason === 'NotFound') return undefined;
      throw err;
    }
  }

  async list(namespace?: string, options: ListOptions = {}): Promise<ObjectList<T>> {
    const path = resourcePath(this.type, namespace) + query({ ...options });
    const list = await this.client.request<{ items?: T[]; metadata?: { resourceVersion?: string } }>('GET', path, this.what('list', namespace));
    const items = (list.items ?? []).map((item) => this.decode(this.complete(item)));
    return { items, resourceVersion: list.metadata?.resourceVersion ?? '' };
  }

  async create(obj: T): Promise<T> {
    const { namespace, name } = obj.metadata;
    const body = this.complete(obj);
    return this.decode(await this.client.request<T>('POST', resourcePath(this.type, namespace), this.what('create', namespace, name), body));
  }

  async replace(obj: T): Promise<T> {
    const { namespace, name } = requireName(obj);
    return this.decode(await this.client.request<T>('PUT', resourcePath(this.type, namespace, name), this.what('replace', namespace, name), this.complete(obj)));
  }

  async mergePatch(namespace: string, name: string, patch: object): Promise<T> {
    const path = resourcePath(this.type, namespace, name);
    return this.decode(await this.client.request<T>('PATCH', path, this.what('patch', namespace, name), patch, MERGE_PATCH));
  }

  async replaceStatus(obj: T): Promise<T> {
    const { namespace, name } = requireName(obj);
    const path = resourcePath(this.type, namespace, name, 'status');
    return this.decode(await this.client.request<T>('PUT', path, this.what('replace status of', namespace, name), this.complete(obj)));
  }

  async mergePatchStatus(namespace: string, name: string, patch: object): Promise<T> {
    const path = resourcePath(this.type, namespace, name, 'status');
    return this.decode(await this.client.request<T>('PATCH', path, this.what('patch status of', namespace, name), patch, MERGE_PATCH));
  }

  async delete(namespace: string, name: string, options: DeleteOptions = {}): Promise<void> {
    const body = {
      apiVersion: 'v1',
      kind: 'DeleteOptions',
      ...(options.propagationPolicy ? { propagationPolicy: options.propagationPolicy } : {}),
      ...(options.uid ? { preconditions: { uid: options.uid } } : {}),
    };
    await this.client.request('DELETE', resourcePath(this.type, namespace, name), this.what('delete', namespace, name), body);
  }
}

function requireName(obj: KubeObject): { namespace?: string; name: string } {
  const { namespace, name } = obj.metadata;
  if (!name) throw new Error(`${obj.kind ?? 'object'} without metadata.name`);
  return { namespace, name };
}
