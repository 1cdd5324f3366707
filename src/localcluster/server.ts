// HTTP: routes Kubernetes REST paths to the cluster, negotiates Table output, streams watches.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Cluster, EventType, PatchType } from './cluster.js';
import { openApiV3Document, openApiV3Index } from './openapi-v3.js';
import { OPENAPI_V2_JSON, OPENAPI_V2_PROTOBUF, PROTOBUF_OPENAPI_ACCEPT, PROTOBUF_OPENAPI_CONTENT_TYPE } from './openapi.js';
import { jsonPatch, mergePatch, strategicMergePatch } from './patch.js';
import { verbOf, type Authorizer, type Identity } from './rbac.js';
import { apiVersionOf } from './resources.js';
import type { ResourceType } from './resources.js';
import { ApiError, errors } from './status.js';
import { assertBodyMediaType, assertNestingDepth, assertParsedDepth, guardRequest } from './request-guard.js';
import type { KObject } from './status.js';
import { decodeProtobufObject, PROTOBUF_MEDIA_TYPE } from './protobuf.js';
import { toTable } from './table.js';
import type { IncludeObject } from './table.js';
import { withoutTrailingSlashes } from '../lib/trailing-slashes.js';

export const SERVER_VERSION = {
  major: '1',
  minor: '31',
  gitVersion: 'v1.31.0',
  gitCommit: 'svc-localcluster',
  gitTreeState: 'clean',
  buildDate: '2026-01-01T00:00:00Z',
  goVersion: 'go1.22.0',
  compiler: 'gc',
  platform: 'linux/amd64',
};

const MAX_BODY = 3 * 1024 * 1024;
/** How far a watcher may fall behind (bytes written and not yet taken by its client). */
const WATCH_UNSENT_BYTES = 16 * 1024 * 1024;
const DEFAULT_WATCH_TIMEOUT_S = 1800;

export interface ServerOptions {
  bookmarkIntervalMs: number;
  /** The address the server listens on: Host headers must name it or loopback (default 127.0.0.1). */
  boundAddress?: string;
  /** Authentication, RBAC and the TokenRequest API (rbac.ts). */
  authorizer: Authorizer;
  /** `pods/log`: a Pod's container log from the node that runs it (undefined: it has none). */
  podLogs?: PodLogs;
}

/** How the server reads a Pod's log (the node simulator's files: node/logs.ts). */
export type PodLogs = (pod: KObject, query: { container?: string; previous?: boolean; tailLines?: number }) => Promise<string | Readable | undefined>;

interface Target { t: ResourceType; ns?: string; name?: string; sub?: string; watchPath: boolean }

function send(res: ServerResponse, code: number, body: unknown, warnings: string[] = []): void {
  const data = JSON.stringify(body);
  const headers: Record<string, string | number | string[]> = { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data), 'Cache-Control': 'no-cache, private' };
  // as the API server: `Warning: 299 - "<text>"`, which kubectl prints as `Warning: <text>`
  if (warnings.length) headers.Warning = warnings.map((w) => `299 - ${JSON.stringify(w)}`);
  res.writeHead(code, headers);
  res.end(data);
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) { reject(new ApiError(413, 'RequestEntityTooLarge', 'the request body is too large')); req.destroy(); return; }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

const mediaType = (req: IncomingMessage) => (req.headers['content-type'] ?? 'application/json').split(';')[0]!.trim().toLowerCase();

async function parseBody(req: IncomingMessage, raw: Buffer): Promise<unknown> {
  if (raw.length === 0) return undefined;
  const type = mediaType(req);
  if (type === PROTOBUF_MEDIA_TYPE) return decodeProtobufObject(raw);
  assertBodyMediaType(type);
  const text = raw.toString('utf8');
  assertNestingDepth(text);
  try {
    if (type === 'application/yaml' || type === 'application/apply-patch+yaml') {
      const { parse } = await import('yaml');
      const value: unknown = parse(text);
      assertParsedDepth(value);
      return value;
    }
    return JSON.parse(text);
  } catch (e) {
    if (e instanceof ApiError) throw e;
    throw errors.badRequest(`the request body could not be decoded: ${(e as Error).message}`);
  }
}

function patchTypeOf(req: IncomingMessage, t: ResourceType): PatchType {
  switch (mediaType(req)) {
    case 'application/merge-patch+json': return 'merge';
    case 'application/json-patch+json': return 'json';
    case 'application/strategic-merge-patch+json':
      if (t.builtin) return 'strategic';
      break;
    case 'application/apply-patch+yaml':
      throw errors.unsupportedMediaType('server-side apply (application/apply-patch+yaml) is not supported by the svc local cluster; use client-side kubectl apply');
  }
  const accepted = t.builtin ? 'application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json' : 'application/json-patch+json, application/merge-patch+json';
  throw errors.unsupportedMediaType(`the body of the request was in an unknown format - accepted media types include: ${accepted}`);
}

function applyPatch(type: PatchType, patch: unknown): (current: KObject) => KObject {
  return (current) => {
    switch (type) {
      case 'merge':
        if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) throw errors.badRequest('a merge patch must be a JSON object');
        return mergePatch(current, patch) as KObject;
      case 'json': return jsonPatch(current, patch) as KObject;
      case 'strategic': return strategicMergePatch(current, patch) as KObject;
    }
  };
}

function wantsTable(req: IncomingMessage): boolean {
  return /as=Table/.test(req.headers.accept ?? '');
}

function includeObject(q: URLSearchParams): IncludeObject {
  const v = q.get('includeObject');
  return v === 'None' || v === 'Object' ? v : 'Metadata';
}

function flag(q: URLSearchParams, name: string): boolean {
  const v = q.get(name);
  return v !== null && v !== 'false' && v !== '0';
}

export function createHandler(cluster: Cluster, opts: ServerOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    guardRequest(req, opts.boundAddress ?? '127.0.0.1');
    const url = new URL(req.url ?? '/', 'http://localhost');
    const segs = url.pathname.split('/').filter(Boolean);
    const method = req.method ?? 'GET';
    const q = url.searchParams;
    const p = withoutTrailingSlashes(url.pathname);

    if (['/healthz', '/readyz', '/livez'].includes(p) || /^\/(healthz|readyz|livez)\//.test(p)) {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.end('ok');
      return;
    }
    // every other path needs an authenticated caller (rbac.ts): 401 without a valid token
    const identity = await opts.authorizer.authenticate(req);
    if (p === '/version') return send(res, 200, SERVER_VERSION);
    if (p === '/openapi/v2') {
      if ((req.headers.accept ?? '').includes(PROTOBUF_OPENAPI_ACCEPT)) {
        res.writeHead(200, { 'Content-Type': PROTOBUF_OPENAPI_CONTENT_TYPE, 'Content-Length': OPENAPI_V2_PROTOBUF.length });
        res.end(OPENAPI_V2_PROTOBUF);
        return;
      }
      return send(res, 200, OPENAPI_V2_JSON);
    }
    if (p === '/openapi/v3') return send(res, 200, openApiV3Index(cluster.registry));
    if (p.startsWith('/openapi/v3/')) {
      const doc = openApiV3Document(cluster.registry, p.slice('/openapi/v3/'.length));
      if (!doc) throw errors.pathNotFound(url.pathname);
      return send(res, 200, doc);
    }
    if (p === '/api') {
      return send(res, 200, { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: req.headers.host ?? '' }] });
    }
    if (p === '/apis') return send(res, 200, cluster.registry.apiGroupList());

    let group: string;
    let version: string;
    let rest: string[];
    if (segs[0] === 'api' && segs.length >= 2) [group, version, rest] = ['', segs[1]!, segs.slice(2)];
    else if (segs[0] === 'apis' && segs.length === 2) {
      const g = cluster.registry.apiGroup(segs[1]!);
      if (!g) throw errors.pathNotFound(url.pathname);
      return send(res, 200, g);
    } else if (segs[0] === 'apis' && segs.length >= 3) [group, version, rest] = [segs[1]!, segs[2]!, segs.slice(3)];
    else throw errors.pathNotFound(url.pathname);

    if (rest.length === 0) {
      const list = cluster.registry.resourceList(group, version);
      if (!list) throw errors.pathNotFound(url.pathname);
      return send(res, 200, list);
    }
    const target = resolve(cluster, group, version, rest, url.pathname);
    await handleResource(req, res, target, q, method, identity);
  };

  const handleResource = async (req: IncomingMessage, res: ServerResponse, target: Target, q: URLSearchParams, method: string, identity: Identity) => {
    const { t, ns, name, sub } = target;
    const watching = target.watchPath || (method === 'GET' && flag(q, 'watch'));
    // the self reviews are open to every caller (what `kubectl auth can-i` needs)
    if (!t.kind.startsWith('SelfSubject')) {
      await opts.authorizer.authorize(identity, { verb: verbOf(method, name !== undefined, watching), group: t.group, resource: t.plural, subresource: sub, namespace: ns, name });
    }
    if (t.review) {
      if (method !== 'POST' || name !== undefined) throw errors.methodNotAllowed(`${method} is not supported on ${t.plural}`);
      const input = ((await parseBody(req, await readBody(req))) ?? {}) as KObject;
      const status = await opts.authorizer.review(identity, t.kind, input, ns);
      return send(res, 201, { ...input, apiVersion: apiVersionOf(t), kind: t.kind, metadata: input.metadata ?? {}, status });
    }
    if (sub === 'token' && t.plural === 'serviceaccounts' && t.group === '' && name !== undefined && ns !== undefined) {
      if (method !== 'POST') throw errors.methodNotAllowed(`${method} is not supported on serviceaccounts/token`);
      const input = (await parseBody(req, await readBody(req))) as KObject | undefined;
      return send(res, 201, await opts.authorizer.issueToken(ns, name, input));
    }
    if (sub === 'log' && t.plural === 'pods' && t.group === '' && name !== undefined && ns !== undefined) {
      if (method !== 'GET') throw errors.methodNotAllowed(`${method} is not supported on pods/log`);
      const pod = await cluster.get(t, ns, name);
      const tailLines = q.get('tailLines');
      const text = await opts.podLogs?.(pod, { container: q.get('container') ?? undefined, previous: flag(q, 'previous'), tailLines: tailLines ? Number(tailLines) : undefined });
      if (text === undefined) throw errors.badRequest(`no log of pod "${name}"${q.get('previous') ? ' (previous run)' : ''}: its container has not run on this cluster's node`);
      if (typeof text !== 'string') {
        // a whole run is streamed as it is read, however large the sandbox made it
        res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-cache, private' });
        await pipeline(text, res).catch(() => res.destroy());
        return;
      }
      res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(text), 'Cache-Control': 'no-cache, private' });
      res.end(text);
      return;
    }
    if (sub !== undefined && sub !== 'status') throw errors.pathNotFound(`${t.plural}/${sub}`);
    if (sub === 'status' && !t.hasStatus) throw errors.pathNotFound(`${t.plural}/status`);
    const dryRun = q.getAll('dryRun').includes('All');
    const fieldValidation = q.get('fieldValidation') ?? undefined;
    const warnings: string[] = [];
    const listOpts = { labelSelector: q.get('labelSelector'), fieldSelector: q.get('fieldSelector'), limit: Number(q.get('limit') ?? 0) || undefined, continue: q.get('continue') };

    if (watching) {
      if (method !== 'GET') throw errors.methodNotAllowed(`${method} is not supported on watch`);
      const fieldSelector = name ? [`metadata.name=${name}`, listOpts.fieldSelector].filter(Boolean).join(',') : listOpts.fieldSelector;
      return watch(req, res, t, ns, { ...listOpts, fieldSelector }, q);
    }
    if (name === undefined) {
      switch (method) {
        case 'GET': {
          const list = await cluster.list(t, ns, listOpts);
          const meta: Record<string, unknown> = { resourceVersion: list.resourceVersion };
          if (list.continue) Object.assign(meta, { continue: list.continue, remainingItemCount: list.remainingItemCount });
          if (wantsTable(req)) return send(res, 200, toTable(t, list.items, includeObject(q), meta));
          return send(res, 200, { kind: `${t.kind}List`, apiVersion: apiVersionOf(t), metadata: meta, items: list.items });
        }
        case 'POST': {
          if (t.namespaced && ns === undefined) throw errors.methodNotAllowed(`POST is not supported on ${t.plural} across all namespaces`);
          const input = (await parseBody(req, await readBody(req))) as KObject;
          return send(res, 201, await cluster.create(t, ns, input ?? {}, { dryRun, fieldValidation, warnings }), warnings);
        }
        case 'DELETE': {
          const options = ((await parseBody(req, await readBody(req))) ?? {}) as Record<string, unknown>;
          return send(res, 200, await cluster.deleteCollection(t, ns, { ...listOpts, propagationPolicy: (options.propagationPolicy as string) ?? q.get('propagationPolicy') ?? undefined }));
        }
        default: throw errors.methodNotAllowed(`${method} is not supported on a collection`);
      }
    }
    switch (method) {
      case 'GET': {
        const o = await cluster.get(t, ns, name);
        if (wantsTable(req)) return send(res, 200, toTable(t, [o], includeObject(q), { resourceVersion: o.metadata?.resourceVersion }));
        return send(res, 200, o);
      }
      case 'PUT': {
        const input = (await parseBody(req, await readBody(req))) as KObject;
        return send(res, 200, await cluster.update(t, ns, name, input ?? {}, { dryRun, fieldValidation, warnings, subresource: sub, requireResourceVersion: true }), warnings);
      }
      case 'PATCH': {
        const type = patchTypeOf(req, t);
        const patch = await parseBody(req, await readBody(req));
        return send(res, 200, await cluster.patch(t, ns, name, applyPatch(type, patch), { dryRun, fieldValidation, warnings, subresource: sub }), warnings);
      }
      case 'DELETE': {
        if (sub) throw errors.methodNotAllowed('DELETE is not supported on a subresource');
        const options = ((await parseBody(req, await readBody(req))) ?? {}) as { propagationPolicy?: string; preconditions?: { uid?: string; resourceVersion?: string }; dryRun?: string[] };
        return send(res, 200, await cluster.delete(t, ns, name, {
          propagationPolicy: options.propagationPolicy ?? q.get('propagationPolicy') ?? undefined,
          preconditions: options.preconditions,
          dryRun: dryRun || (options.dryRun ?? []).includes('All'),
        }));
      }
      default: throw errors.methodNotAllowed(`${method} is not supported`);
    }
  };

  const watch = async (req: IncomingMessage, res: ServerResponse, t: ResourceType, ns: string | undefined, listOpts: Parameters<Cluster['list']>[2], q: URLSearchParams) => {
    const table = wantsTable(req);
    const include = includeObject(q);
    let started = false;
    const start = () => {
      if (started) return;
      started = true;
      res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
      res.flushHeaders();
    };
    // A watcher that stops reading is cut once its unsent events pass a bound over what its setup
    // queued (as kube-apiserver drops an unresponsive watcher): it watches again from its last
    // resourceVersion. Held without end, 5,000 events of a 10 KB object were 139 MB.
    let unsentBound = Number.POSITIVE_INFINITY; // set once the watch is set up
    const write = (type: string, object: unknown) => {
      start();
      res.write(JSON.stringify({ type, object }) + '\n');
      if (res.writableLength > unsentBound) res.destroy();
    };
    const emit = (type: EventType, o: KObject) => write(type, table ? toTable(t, [o], include, { resourceVersion: o.metadata?.resourceVersion }) : o);
    let stop: (() => void) | undefined;
    try {
      stop = await cluster.watch(t, ns, { ...listOpts, resourceVersion: q.get('resourceVersion') ?? undefined }, emit);
    } catch (e) {
      if (e instanceof ApiError && e.code === 410) {
        write('ERROR', e.toStatus());
        res.end();
        return;
      }
      throw e;
    }
    start();
    unsentBound = res.writableLength + WATCH_UNSENT_BYTES;
    const timers: NodeJS.Timeout[] = [];
    const finish = () => {
      stop?.();
      for (const timer of timers) clearTimeout(timer);
      if (!res.writableEnded) res.end();
    };
    const timeout = Number(q.get('timeoutSeconds') ?? DEFAULT_WATCH_TIMEOUT_S);
    timers.push(setTimeout(finish, Math.max(0, timeout) * 1000));
    if (flag(q, 'allowWatchBookmarks')) {
      timers.push(setInterval(() => write('BOOKMARK', { kind: t.kind, apiVersion: apiVersionOf(t), metadata: { resourceVersion: String(cluster.resourceVersion) } }), opts.bookmarkIntervalMs));
    }
    req.on('close', finish);
    res.on('close', finish);
    // a client that left while the watch was being set up: its close came before these listeners
    if (req.destroyed || res.destroyed) finish();
  };

  return (req, res) => {
    route(req, res).catch((e: unknown) => {
      if (res.headersSent) { res.destroy(); return; }
      const err = e instanceof ApiError ? e : errors.internal((e as Error)?.message ?? String(e));
      if (!(e instanceof ApiError)) console.error('localcluster: internal error', e);
      send(res, err.code, err.toStatus());
    });
  };
}

/** Maps the path after /api/v1 or /apis/g/v to a resource type, namespace, name and subresource. */
function resolve(cluster: Cluster, group: string, version: string, input: string[], path: string): Target {
  let rest = input;
  const watchPath = rest[0] === 'watch';
  if (watchPath) rest = rest.slice(1);
  let ns: string | undefined;
  // /api/v1/namespaces/NAME/status and /finalize are the Namespace's own subresources.
  const namespaceSub = group === '' && rest.length === 3 && (rest[2] === 'status' || rest[2] === 'finalize');
  if (rest[0] === 'namespaces' && rest.length >= 3 && !namespaceSub) {
    ns = rest[1];
    rest = rest.slice(2);
  }
  const [plural, name, sub, ...extra] = rest;
  const t = plural ? cluster.registry.lookup(group, version, plural) : undefined;
  if (!t || extra.length) throw errors.pathNotFound(path);
  if (ns !== undefined && !t.namespaced) throw errors.pathNotFound(path);
  if (name !== undefined && t.namespaced && ns === undefined) throw errors.pathNotFound(path);
  return { t, ns, name, sub, watchPath };
}
