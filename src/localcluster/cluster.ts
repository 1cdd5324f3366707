// The object store and its semantics: resourceVersions, uids, generation, finalizers,
// namespaces, owner garbage collection, CRD registration, schema handling, watch fan-out.
// Every change is journaled; callers and watchers hear of it only once it is durable.
import { randomUUID, randomBytes } from 'node:crypto';
import { Journal } from './journal.js';
import type { JournalRecord, LoadedState } from './journal.js';
import { CRD_GROUP, Registry, apiVersionOf, storeId } from './resources.js';
import type { CrdSpec, ResourceType } from './resources.js';
import { applyDefaults, prune, validate } from './schema.js';
import { fieldSelector, labelKeyValid, labelSelector, labelValueValid } from './selectors.js';
import type { Matcher } from './selectors.js';
import { ApiError, errors, successStatus } from './status.js';
import type { KObject, ObjectMeta, StatusCause } from './status.js';

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';
export interface ChangeEvent { type: EventType; sid: string; rv: number; obj: KObject; prev?: KObject }

export interface Watcher {
  sid: string;
  namespace?: string;
  matches: Matcher;
  /** Last resourceVersion sent: older events are not sent again. */
  rv: number;
  send(type: EventType, obj: KObject): void;
}

export interface WriteOptions {
  dryRun?: boolean;
  /** Strict (refuse unknown fields), Ignore, or Warn (the default, as the real API server's) */
  fieldValidation?: string;
  /** filled with the warnings the answer carries (unknown fields dropped under Warn) */
  warnings?: string[];
}
export interface ListOptions { labelSelector?: string | null; fieldSelector?: string | null; limit?: number; continue?: string | null }
export type PatchType = 'merge' | 'json' | 'strategic';

const INITIAL_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];
const PROTECTED_NAMESPACES = ['default', 'kube-system', 'kube-public'];
/** Built-ins whose status the server writes: a write to the main resource keeps it. */
const SERVER_OWNED_STATUS = new Set(['/namespaces', `${CRD_GROUP}/customresourcedefinitions`]);
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** Kubernetes' TotalAnnotationSizeLimitB: an object's annotations, keys and values, in bytes. */
const MAX_ANNOTATION_BYTES = 256 * 1024;
/** The watch history keeps at most this many bytes of objects (as journaled), besides its count. */
const HISTORY_BYTES = 64 * 1024 * 1024;

const now = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');
const objKey = (ns: string | undefined, name: string) => `${ns ?? ''}/${name}`;
const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isMap(a) && isMap(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => deepEqual(a[k], b[k]));
  }
  return false;
}

/** The object without metadata (and without status, for what counts as a spec change). */
function body(o: KObject, withStatus: boolean): Record<string, unknown> {
  const { metadata: _m, apiVersion: _a, kind: _k, ...rest } = o;
  if (!withStatus) delete rest.status;
  return rest;
}

export class Cluster {
  readonly registry = new Registry();
  private objects = new Map<string, Map<string, KObject>>();
  private uids = new Map<string, { sid: string; key: string }>();
  /** owner uid -> "sid|key" of dependents */
  private dependents = new Map<string, Set<string>>();
  private rv = 0;
  private durableRv = 0;
  private journal!: Journal;
  private pending = new Map<number, ChangeEvent>();
  private history: ChangeEvent[] = [];
  /** The journal line lengths of the events in history: it is bounded by these too, not only by count. */
  private historySizes: number[] = [];
  private historyBytes = 0;
  /** Events with rv <= floor are no longer in history: a watch from before it gets 410. */
  private historyFloor = 0;
  private watchers = new Map<string, Set<Watcher>>();
  private clusterIpCounter = 0;

  constructor(private readonly historyLimit = 10_000, private readonly historyBytesLimit = HISTORY_BYTES) {}

  static async open(dataDir: string, historyLimit?: number, historyBytesLimit?: number): Promise<Cluster> {
    const c = new Cluster(historyLimit, historyBytesLimit);
    const { state, journal } = Journal.load(dataDir);
    c.rv = c.durableRv = c.historyFloor = state.rv;
    for (const [k, o] of state.objects) c.index(k, o);
    // CRDs first registered in load order would miss nothing: registration only affects routing.
    for (const crd of c.objects.get(storeId({ group: CRD_GROUP, plural: 'customresourcedefinitions' }))?.values() ?? []) c.registry.registerCrd(crd);
    c.journal = Journal.open(dataDir, journal, (recs, sizes) => c.onDurable(recs, sizes), () => c.state());
    for (const ns of INITIAL_NAMESPACES) {
      const t = c.type('', 'v1', 'namespaces');
      if (!c.find(t, undefined, ns)) await c.create(t, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    }
    c.gcOrphans();
    return c;
  }

  async close(): Promise<void> {
    await this.journal.close();
  }

  /** Compacts the journal into a snapshot now (tests and benchmarks). */
  compact(): void {
    this.journal.compact();
  }

  type(group: string, version: string, plural: string): ResourceType {
    const t = this.registry.lookup(group, version, plural);
    if (!t) throw errors.pathNotFound(`${plural}`);
    return t;
  }

  get resourceVersion(): number {
    return this.durableRv;
  }

  private state(): LoadedState {
    const objects = new Map<string, KObject>();
    for (const [sid, m] of this.objects) for (const [k, o] of m) objects.set(`${sid}/${k}`, o);
    return { rv: this.rv, objects };
  }

  // --- storage -----------------------------------------------------------------------------

  private index(fullKey: string, o: KObject): void {
    const parts = fullKey.split('/');
    const sid = `${parts[0]}/${parts[1]}`;
    const key = `${parts[2]}/${parts[3]}`;
    this.put(sid, key, o);
  }

  private put(sid: string, key: string, o: KObject | undefined): void {
    let m = this.objects.get(sid);
    if (!m) this.objects.set(sid, (m = new Map()));
    const prev = m.get(key);
    if (prev) {
      this.uids.delete(prev.metadata!.uid!);
      for (const ref of prev.metadata?.ownerReferences ?? []) {
        const deps = this.dependents.get(ref.uid);
        // an owner that never existed (or went first) keeps no empty entry
        if (deps?.delete(`${sid}|${key}`) && deps.size === 0) this.dependents.delete(ref.uid);
      }
    }
    if (!o) { m.delete(key); return; }
    m.set(key, o);
    this.uids.set(o.metadata!.uid!, { sid, key });
    for (const ref of o.metadata?.ownerReferences ?? []) {
      let deps = this.dependents.get(ref.uid);
      if (!deps) this.dependents.set(ref.uid, (deps = new Set()));
      deps.add(`${sid}|${key}`);
    }
  }

  /** Stores (or removes) an object under a new resourceVersion; resolves once durable. */
  private async commit(t: ResourceType, type: EventType, next: KObject, prev?: KObject): Promise<KObject> {
    const sid = storeId(t);
    const meta = next.metadata!;
    const key = objKey(meta.namespace, meta.name!);
    const rv = ++this.rv;
    const stored = type === 'DELETED' ? next : { ...next, metadata: { ...meta, resourceVersion: String(rv) } };
    this.put(sid, key, type === 'DELETED' ? undefined : stored);
    const event: ChangeEvent = { type, sid, rv, obj: type === 'DELETED' ? { ...next, metadata: { ...meta, resourceVersion: String(rv) } } : stored, prev };
    this.pending.set(rv, event);
    const rec: JournalRecord = { rv, k: `${sid}/${key}` };
    if (type !== 'DELETED') rec.obj = stored;
    await this.journal.append(rec);
    return event.obj;
  }

  private onDurable(records: JournalRecord[], sizes: number[]): void {
    records.forEach((rec, i) => {
      const ev = this.pending.get(rec.rv);
      this.pending.delete(rec.rv);
      this.durableRv = rec.rv;
      if (!ev) return;
      this.history.push(ev);
      this.historySizes.push(sizes[i]!);
      this.historyBytes += sizes[i]!;
      for (const w of this.watchers.get(ev.sid) ?? []) this.deliver(w, ev);
    });
    // each event holds a version of its object: 10,000 of a 200 KB one were 1.9 GB
    let drop = Math.max(0, this.history.length - this.historyLimit);
    let bytes = this.historyBytes;
    for (let i = 0; i < drop; i++) bytes -= this.historySizes[i]!;
    while (bytes > this.historyBytesLimit && drop < this.history.length - 1) bytes -= this.historySizes[drop++]!;
    if (drop > 0) {
      this.historyFloor = this.history[drop - 1]!.rv;
      this.history.splice(0, drop);
      this.historySizes.splice(0, drop);
      this.historyBytes = bytes;
    }
  }

  /** Sends an event to a watcher, translated for its selector (a change out of the selection is a DELETED). */
  private deliver(w: Watcher, ev: ChangeEvent): void {
    if (ev.rv <= w.rv) return;
    w.rv = ev.rv;
    const ns = ev.obj.metadata?.namespace;
    if (w.namespace !== undefined && ns !== w.namespace) return;
    const now = w.matches(ev.obj);
    if (ev.type !== 'MODIFIED') { if (now) w.send(ev.type, ev.obj); return; }
    const before = ev.prev ? w.matches(ev.prev) : false;
    if (now) w.send(before ? 'MODIFIED' : 'ADDED', ev.obj);
    else if (before) w.send('DELETED', ev.obj);
  }

  private find(t: ResourceType, ns: string | undefined, name: string): KObject | undefined {
    return this.objects.get(storeId(t))?.get(objKey(t.namespaced ? ns : undefined, name));
  }

  /** The stored object, shown in the version it was asked for. */
  private view(t: ResourceType, o: KObject): KObject {
    const apiVersion = apiVersionOf(t);
    return o.apiVersion === apiVersion && o.kind === t.kind ? o : { ...o, apiVersion, kind: t.kind };
  }

  private async readBarrier(): Promise<void> {
    const idle = this.journal.idle();
    if (idle) await idle;
  }

  // --- reads -------------------------------------------------------------------------------

  async get(t: ResourceType, ns: string | undefined, name: string): Promise<KObject> {
    await this.readBarrier();
    const o = this.find(t, ns, name);
    if (!o) throw errors.notFound(t.group, t.plural, name);
    return this.view(t, o);
  }

  /**
   * The objects a list selects, after the key `after` (a continue token's) when given, in key order
   * (code units, as the continue token compares: localeCompare cost a page of 30,000 objects 90 ms).
   */
  private selected(t: ResourceType, ns: string | undefined, opts: ListOptions, after?: string): KObject[] {
    const byLabel = labelSelector(opts.labelSelector);
    const byField = fieldSelector(opts.fieldSelector, t.kind);
    const out: { key: string; o: KObject }[] = [];
    for (const o of this.objects.get(storeId(t))?.values() ?? []) {
      if (ns !== undefined && t.namespaced && o.metadata?.namespace !== ns) continue;
      if (!byLabel(o) || !byField(o)) continue;
      const key = objKey(o.metadata?.namespace, o.metadata!.name!);
      if (after === undefined || key > after) out.push({ key, o });
    }
    return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)).map(({ o }) => this.view(t, o));
  }

  async list(t: ResourceType, ns: string | undefined, opts: ListOptions): Promise<{ items: KObject[]; resourceVersion: string; continue?: string; remainingItemCount?: number }> {
    await this.readBarrier();
    let after: string | undefined;
    if (opts.continue) {
      try { after = JSON.parse(Buffer.from(opts.continue, 'base64url').toString('utf8')).k; } catch { /* below */ }
      if (typeof after !== 'string') throw errors.badRequest('invalid continue token');
    }
    const items = this.selected(t, ns, opts, after);
    const resourceVersion = String(this.durableRv);
    if (opts.limit && opts.limit > 0 && items.length > opts.limit) {
      const page = items.slice(0, opts.limit);
      const last = page[page.length - 1]!.metadata!;
      const token = Buffer.from(JSON.stringify({ k: objKey(last.namespace, last.name!) })).toString('base64url');
      return { items: page, resourceVersion, continue: token, remainingItemCount: items.length - page.length };
    }
    return { items, resourceVersion };
  }

  /**
   * Starts a watch. `fromRv` undefined/"0": the current objects as ADDED first. A resourceVersion older
   * than the kept history: 410 Expired. Returns a function that stops it.
   */
  async watch(t: ResourceType, ns: string | undefined, opts: ListOptions & { resourceVersion?: string }, send: Watcher['send']): Promise<() => void> {
    const matches = combine(labelSelector(opts.labelSelector), fieldSelector(opts.fieldSelector, t.kind));
    await this.readBarrier();
    const sid = storeId(t);
    const w: Watcher = { sid, namespace: t.namespaced ? ns : undefined, matches, rv: this.durableRv, send: (type, o) => send(type, this.view(t, o)) };
    const from = opts.resourceVersion;
    if (!from || from === '0') {
      for (const o of this.selected(t, ns, opts)) send('ADDED', o);
    } else {
      const rv = Number(from);
      if (!Number.isInteger(rv) || rv < 0) throw errors.badRequest(`invalid resource version: ${from}`);
      if (rv < this.historyFloor) throw errors.gone(`too old resource version: ${rv} (${this.historyFloor + 1})`);
      w.rv = rv;
      for (const ev of this.history) if (ev.sid === sid && ev.rv > rv) this.deliver(w, ev);
      w.rv = Math.max(w.rv, this.durableRv);
    }
    let set = this.watchers.get(sid);
    if (!set) this.watchers.set(sid, (set = new Set()));
    set.add(w);
    return () => set!.delete(w);
  }

  // --- writes ------------------------------------------------------------------------------

  private checkTypeMeta(t: ResourceType, o: KObject): void {
    if (!isMap(o)) throw errors.badRequest('the request body must be a JSON object');
    const want = apiVersionOf(t);
    if (o.apiVersion !== undefined && o.apiVersion !== want) {
      throw errors.badRequest(`the API version in the data (${String(o.apiVersion)}) does not match the expected API version (${want})`);
    }
    if (o.kind !== undefined && o.kind !== t.kind) throw errors.badRequest(`the kind in the data (${String(o.kind)}) does not match the expected kind (${t.kind})`);
    if (o.metadata !== undefined && !isMap(o.metadata)) throw errors.badRequest('metadata must be an object');
  }

  private checkNamespace(t: ResourceType, ns: string | undefined, name: string): void {
    if (!t.namespaced) return;
    const nsObj = this.find(this.type('', 'v1', 'namespaces'), undefined, ns!);
    if (!nsObj) throw errors.notFound('', 'namespaces', ns!);
    if (nsObj.metadata?.deletionTimestamp) {
      throw errors.forbidden(`${t.plural} "${name}" is forbidden: unable to create new content in namespace ${ns} because it is being terminated`);
    }
  }

  /** Schema (custom resources), metadata and per-kind rules; returns the 422 causes. */
  private admit(t: ResourceType, o: KObject, opts: WriteOptions): void {
    const causes: StatusCause[] = [];
    const meta = o.metadata!;
    const name = meta.name ?? '';
    if (!name) causes.push({ reason: 'FieldValueRequired', field: 'metadata.name', message: 'Required value: name or generateName is required' });
    else {
      const problem = nameProblem(t, name);
      if (problem) causes.push({ reason: 'FieldValueInvalid', field: 'metadata.name', message: `Invalid value: "${name}": ${problem}` });
    }
    for (const [k, v] of Object.entries(meta.labels ?? {})) {
      if (!labelKeyValid(k)) causes.push({ reason: 'FieldValueInvalid', field: 'metadata.labels', message: `Invalid value: "${k}": name part must consist of alphanumeric characters, '-', '_' or '.'` });
      if (typeof v !== 'string' || !labelValueValid(v)) causes.push({ reason: 'FieldValueInvalid', field: `metadata.labels`, message: `Invalid value: "${String(v)}": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character` });
    }
    let annotationBytes = 0;
    for (const [k, v] of Object.entries(meta.annotations ?? {})) {
      if (typeof v !== 'string') causes.push({ reason: 'FieldValueInvalid', field: `metadata.annotations.${k}`, message: 'Invalid value: annotation values must be strings' });
      else annotationBytes += Buffer.byteLength(k) + Buffer.byteLength(v);
    }
    // apimachinery's ValidateAnnotationsSize
    if (annotationBytes > MAX_ANNOTATION_BYTES) causes.push({ reason: 'FieldValueTooLong', field: 'metadata.annotations', message: `Too long: must have at most ${MAX_ANNOTATION_BYTES} bytes` });
    if (t.schema) {
      const pruned = prune(o, t.schema);
      if (opts.fieldValidation === 'Strict' && pruned.length) {
        throw errors.badRequest(`strict decoding error: ${pruned.map((p) => `unknown field "${p}"`).join(', ')}`);
      }
      if (opts.fieldValidation !== 'Ignore') opts.warnings?.push(...pruned.map((p) => `unknown field "${p}"`));
      applyDefaults(o, t.schema);
      causes.push(...validate(o, t.schema));
    }
    if (t.group === CRD_GROUP && t.plural === 'customresourcedefinitions') causes.push(...crdCauses(o));
    if (causes.length) throw errors.invalid(t.kind, t.group, name, causes);
  }

  async create(t: ResourceType, ns: string | undefined, input: KObject, opts: WriteOptions = {}): Promise<KObject> {
    this.checkTypeMeta(t, input);
    const o = structuredClone(input);
    const meta: ObjectMeta = (o.metadata = { ...(o.metadata ?? {}) });
    if (t.namespaced) {
      if (meta.namespace && meta.namespace !== ns) throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
      meta.namespace = ns;
    } else delete meta.namespace;
    if (!meta.name && meta.generateName) meta.name = `${meta.generateName}${randomBytes(4).toString('hex').slice(0, 5)}`;
    o.apiVersion = apiVersionOf(t);
    o.kind = t.kind;
    if (t.hasStatus && !t.builtin) delete o.status;
    this.admit(t, o, opts);
    this.checkNamespace(t, ns, meta.name!);
    if (this.find(t, ns, meta.name!)) throw errors.alreadyExists(t.group, t.plural, meta.name!);
    delete meta.resourceVersion;
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    meta.uid = randomUUID();
    meta.creationTimestamp = now();
    if (!t.builtin || o.spec !== undefined) meta.generation = 1;
    this.defaultsForKind(t, o);
    if (opts.dryRun) return o;
    const created = await this.commit(t, 'ADDED', o);
    if (t.group === '' && t.plural === 'namespaces') await this.createDefaultServiceAccount(meta.name!);
    if (meta.ownerReferences?.length) this.collectIfOrphaned(`${storeId(t)}|${objKey(meta.namespace, meta.name!)}`);
    if (t.group === CRD_GROUP && t.plural === 'customresourcedefinitions') this.registry.registerCrd(created);
    return this.view(t, created);
  }

  /** What the real serviceaccount controller does for every namespace. */
  private async createDefaultServiceAccount(ns: string): Promise<void> {
    const t = this.type('', 'v1', 'serviceaccounts');
    if (!this.find(t, ns, 'default')) await this.create(t, ns, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } });
  }

  /** Built-in defaults clients read back: namespace phase, Service type and clusterIP, CRD conditions, Secret stringData. */
  private defaultsForKind(t: ResourceType, o: KObject): void {
    if (!t.builtin) return;
    const spec = (isMap(o.spec) ? o.spec : undefined) as Record<string, unknown> | undefined;
    switch (`${t.group}/${t.plural}`) {
      case '/namespaces':
        o.spec = { finalizers: ['kubernetes'], ...(spec ?? {}) };
        o.status = { phase: 'Active' };
        break;
      case '/services':
        if (spec) {
          spec.type ??= 'ClusterIP';
          if (spec.type !== 'ExternalName' && spec.clusterIP === undefined) {
            const n = ++this.clusterIpCounter + Math.floor(Math.random() * 60000);
            spec.clusterIP = `10.96.${(n >> 8) & 255}.${(n & 255) || 1}`;
            spec.clusterIPs = [spec.clusterIP];
          }
        }
        break;
      case '/secrets':
        if (isMap(o.stringData)) {
          const data = { ...((o.data as Record<string, string> | undefined) ?? {}) };
          for (const [k, v] of Object.entries(o.stringData)) data[k] = Buffer.from(String(v)).toString('base64');
          o.data = data;
          delete o.stringData;
        }
        o.type ??= 'Opaque';
        break;
      case `${CRD_GROUP}/customresourcedefinitions`: {
        const s = o.spec as CrdSpec;
        const ts = now();
        const storage = s.versions?.find((v) => v.storage)?.name;
        const cond = (type: string, reason: string, message: string) => ({ type, status: 'True', lastTransitionTime: ts, reason, message });
        o.status = {
          conditions: [cond('NamesAccepted', 'NoConflicts', 'no conflicts found'), cond('Established', 'InitialNamesAccepted', 'the initial names have been accepted')],
          acceptedNames: { ...s.names, singular: s.names.singular || s.names.kind.toLowerCase(), listKind: s.names.listKind ?? `${s.names.kind}List` },
          storedVersions: storage ? [storage] : [],
        };
        break;
      }
    }
  }

  /**
   * Replaces an object (PUT, and the end of every PATCH). `subresource` "status" changes only the
   * status; the main resource of a custom resource with a status subresource keeps the old status.
   */
  async update(t: ResourceType, ns: string | undefined, name: string, input: KObject, opts: WriteOptions & { subresource?: string; requireResourceVersion?: boolean } = {}): Promise<KObject> {
    this.checkTypeMeta(t, input);
    const current = this.find(t, ns, name);
    if (!current) throw errors.notFound(t.group, t.plural, name);
    const o = structuredClone(input);
    const meta: ObjectMeta = (o.metadata = { ...(o.metadata ?? {}) });
    if (meta.name !== undefined && meta.name !== name) throw errors.badRequest(`the name of the object (${meta.name}) does not match the name on the URL (${name})`);
    if (t.namespaced && meta.namespace !== undefined && meta.namespace !== ns) throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
    const cur = current.metadata!;
    if (meta.resourceVersion !== undefined && meta.resourceVersion !== '' && meta.resourceVersion !== cur.resourceVersion) throw errors.conflict(t.group, t.plural, name);
    if (!meta.resourceVersion && !t.builtin && opts.requireResourceVersion) {
      throw errors.invalid(t.kind, t.group, name, [{ reason: 'FieldValueInvalid', field: 'metadata.resourceVersion', message: 'Invalid value: 0x0: must be specified for an update' }]);
    }
    let next: KObject;
    if (opts.subresource === 'status') {
      next = { ...structuredClone(current), status: o.status };
      if (o.status === undefined) delete next.status;
    } else {
      next = o;
      next.apiVersion = apiVersionOf(t);
      next.kind = t.kind;
      if (t.hasStatus && !t.builtin) {
        if (current.status === undefined) delete next.status;
        else next.status = structuredClone(current.status);
      }
      // Fields the server owns.
      Object.assign(meta, { name, namespace: cur.namespace, uid: cur.uid, creationTimestamp: cur.creationTimestamp });
      if (cur.deletionTimestamp) Object.assign(meta, { deletionTimestamp: cur.deletionTimestamp, deletionGracePeriodSeconds: cur.deletionGracePeriodSeconds });
      else { delete meta.deletionTimestamp; delete meta.deletionGracePeriodSeconds; }
      if (!t.namespaced) delete meta.namespace;
      if (cur.generation !== undefined) meta.generation = cur.generation;
      else delete meta.generation;
      if (cur.deletionTimestamp && (meta.finalizers ?? []).some((f) => !(cur.finalizers ?? []).includes(f))) {
        throw errors.forbidden(`Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify((meta.finalizers ?? []).filter((f) => !(cur.finalizers ?? []).includes(f)))}`);
      }
    }
    this.admit(t, next, opts);
    if (SERVER_OWNED_STATUS.has(storeId(t)) && opts.subresource !== 'status') {
      if (current.status === undefined) delete next.status;
      else next.status = current.status;
    }
    if (t.group === '' && t.plural === 'secrets') this.defaultsForKind(t, next);
    if (opts.subresource !== 'status' && cur.generation !== undefined && !deepEqual(body(next, t.builtin), body(current, t.builtin))) {
      next.metadata!.generation = cur.generation + 1;
    }
    next.metadata!.resourceVersion = cur.resourceVersion;
    if (deepEqual(next, current)) return this.view(t, current);
    if (opts.dryRun) return this.view(t, next);
    if (cur.deletionTimestamp && !(next.metadata!.finalizers?.length)) {
      return this.view(t, await this.remove(t, next));
    }
    const updated = await this.commit(t, 'MODIFIED', next, current);
    if (next.metadata!.ownerReferences?.length) this.collectIfOrphaned(`${storeId(t)}|${objKey(cur.namespace, name)}`);
    if (t.group === CRD_GROUP && t.plural === 'customresourcedefinitions') this.registry.registerCrd(updated);
    return this.view(t, updated);
  }

  async patch(t: ResourceType, ns: string | undefined, name: string, apply: (current: KObject) => KObject, opts: WriteOptions & { subresource?: string } = {}): Promise<KObject> {
    const current = this.find(t, ns, name);
    if (!current) throw errors.notFound(t.group, t.plural, name);
    const patched = apply(this.view(t, structuredClone(current)));
    if (!isMap(patched)) throw errors.badRequest('the patch did not produce an object');
    if (!isMap(patched.metadata)) patched.metadata = {};
    return this.update(t, ns, name, patched, opts);
  }

  /** DELETE: with finalizers only marks the object; returns the object (pending) or a Success status. */
  async delete(t: ResourceType, ns: string | undefined, name: string, opts: { propagationPolicy?: string; preconditions?: { uid?: string; resourceVersion?: string }; dryRun?: boolean } = {}): Promise<KObject> {
    const current = this.find(t, ns, name);
    if (!current) throw errors.notFound(t.group, t.plural, name);
    const cur = current.metadata!;
    if (opts.preconditions?.uid && opts.preconditions.uid !== cur.uid) {
      throw errors.conflict(t.group, t.plural, name);
    }
    if (opts.preconditions?.resourceVersion && opts.preconditions.resourceVersion !== cur.resourceVersion) throw errors.conflict(t.group, t.plural, name);
    if (opts.dryRun) return this.view(t, current);
    if (opts.propagationPolicy === 'Orphan') await this.orphanDependents(cur.uid!);
    if (t.builtin && t.plural === 'namespaces' && t.group === '') {
      if (PROTECTED_NAMESPACES.includes(name)) throw errors.forbidden(`namespaces "${name}" is forbidden: this namespace may not be deleted`);
      return this.view(t, await this.deleteNamespace(t, current));
    }
    if (cur.finalizers?.length) {
      if (cur.deletionTimestamp) return this.view(t, current);
      const next = { ...current, metadata: { ...cur, deletionTimestamp: now(), deletionGracePeriodSeconds: 0 } };
      if (cur.generation !== undefined && !t.builtin) next.metadata.generation = cur.generation + 1;
      return this.view(t, await this.commit(t, 'MODIFIED', next, current));
    }
    await this.remove(t, current);
    return successStatus({ name, group: t.group || undefined, kind: t.plural, uid: cur.uid });
  }

  async deleteCollection(t: ResourceType, ns: string | undefined, opts: ListOptions & { propagationPolicy?: string }): Promise<KObject> {
    const { items } = await this.list(t, ns, opts);
    for (const o of items) {
      try { await this.delete(t, o.metadata!.namespace, o.metadata!.name!, opts); } catch (e) { if (!(e instanceof ApiError && e.code === 404)) throw e; }
    }
    return successStatus({ group: t.group || undefined, kind: t.plural });
  }

  /** Removes the object for good, then: its CRD's objects, its dependents, its namespace if that was waiting. */
  private async remove(t: ResourceType, o: KObject): Promise<KObject> {
    const gone = await this.commit(t, 'DELETED', o, this.find(t, o.metadata?.namespace, o.metadata!.name!));
    if (t.group === CRD_GROUP && t.plural === 'customresourcedefinitions') await this.dropCrd(o);
    this.collectDependents(o.metadata!.uid!);
    const ns = o.metadata?.namespace;
    if (ns) await this.finishNamespaceIfEmpty(ns);
    return gone;
  }

  private async dropCrd(crd: KObject): Promise<void> {
    const spec = crd.spec as CrdSpec;
    const version = spec.versions?.find((v) => v.served !== false)?.name;
    const t = version ? this.registry.lookup(spec.group, version, spec.names.plural) : undefined;
    if (t) for (const o of [...(this.objects.get(storeId(t))?.values() ?? [])]) await this.commit(t, 'DELETED', o, o);
    this.registry.unregisterCrd(crd.metadata!.name!);
  }

  private typeOfSid(sid: string): ResourceType | undefined {
    const [group, plural] = sid.split('/') as [string, string];
    for (const t of this.allTypes()) if (t.group === group && t.plural === plural) return t;
    return undefined;
  }

  private *allTypes(): Iterable<ResourceType> {
    for (const gv of this.registry.groupVersions()) yield* this.registry.typesOf(gv);
  }

  /** Background garbage collection: dependents whose owners are all gone are deleted. */
  private collectDependents(ownerUid: string): void {
    const deps = this.dependents.get(ownerUid);
    this.dependents.delete(ownerUid);
    for (const ref of deps ?? []) this.collectIfOrphaned(ref);
  }

  /** Soon (as the real garbage collector would): deletes the object at "sid|key" if none of its owners exists. */
  private collectIfOrphaned(ref: string): void {
    setImmediate(() => {
      const [sid, key] = ref.split('|') as [string, string];
      const o = this.objects.get(sid)?.get(key);
      const owners = o?.metadata?.ownerReferences ?? [];
      const t = this.typeOfSid(sid);
      if (!o || !t || owners.length === 0 || owners.some((r) => this.uids.has(r.uid))) return;
      this.delete(t, o.metadata?.namespace, o.metadata!.name!).catch(() => undefined);
    });
  }

  /**
   * Deletes Events (core/v1 and events.k8s.io/v1) not written to for `ttlMs`, as kube-apiserver's
   * --event-ttl does (there every write renews the etcd lease; here the Event's own latest
   * timestamp stands for the last write, so the rule survives a restart). Returns how many went.
   */
  async expireEvents(ttlMs: number, nowMs = Date.now()): Promise<number> {
    let expired = 0;
    for (const group of ['', 'events.k8s.io']) {
      const sid = storeId({ group, plural: 'events' });
      const t = this.typeOfSid(sid);
      if (!t) continue;
      for (const o of [...(this.objects.get(sid)?.values() ?? [])]) {
        if (nowMs - lastEventWrite(o) <= ttlMs) continue;
        await this.delete(t, o.metadata?.namespace, o.metadata!.name!).catch(() => undefined);
        expired++;
      }
    }
    return expired;
  }

  /** At startup: objects whose owners vanished while the server was down. */
  private gcOrphans(): void {
    for (const [sid, m] of this.objects) for (const [key, o] of m) if (o.metadata?.ownerReferences?.length) this.collectIfOrphaned(`${sid}|${key}`);
  }

  private async orphanDependents(ownerUid: string): Promise<void> {
    for (const ref of [...(this.dependents.get(ownerUid) ?? [])]) {
      const [sid, key] = ref.split('|') as [string, string];
      const o = this.objects.get(sid)?.get(key);
      const t = this.typeOfSid(sid);
      if (!o || !t) continue;
      const next = structuredClone(o);
      next.metadata!.ownerReferences = (o.metadata!.ownerReferences ?? []).filter((r) => r.uid !== ownerUid);
      if (!next.metadata!.ownerReferences.length) delete next.metadata!.ownerReferences;
      await this.commit(t, 'MODIFIED', next, o);
    }
  }

  /** Marks the namespace Terminating, deletes everything in it, and removes it once empty. */
  private async deleteNamespace(t: ResourceType, ns: KObject): Promise<KObject> {
    const name = ns.metadata!.name!;
    let current = ns;
    if (!ns.metadata!.deletionTimestamp) {
      const next = { ...ns, metadata: { ...ns.metadata, deletionTimestamp: now(), deletionGracePeriodSeconds: 0 }, status: { phase: 'Terminating' } };
      current = await this.commit(t, 'MODIFIED', next, ns);
    }
    for (const rt of this.allTypes()) {
      if (!rt.namespaced) continue;
      for (const o of [...(this.objects.get(storeId(rt))?.values() ?? [])]) {
        if (o.metadata?.namespace !== name) continue;
        try { await this.delete(rt, name, o.metadata!.name!); } catch (e) { if (!(e instanceof ApiError && e.code === 404)) throw e; }
      }
    }
    await this.finishNamespaceIfEmpty(name);
    return this.find(t, undefined, name) ?? current;
  }

  private async finishNamespaceIfEmpty(name: string): Promise<void> {
    const t = this.type('', 'v1', 'namespaces');
    const ns = this.find(t, undefined, name);
    if (!ns?.metadata?.deletionTimestamp) return;
    for (const m of this.objects.values()) for (const o of m.values()) if (o.metadata?.namespace === name) return;
    if (this.find(t, undefined, name) === ns) await this.commit(t, 'DELETED', ns, ns);
  }
}

/** Namespaces are DNS labels, RBAC kinds any path segment (e.g. "system:controller"), the rest DNS subdomains. */
function nameProblem(t: ResourceType, name: string): string | undefined {
  if (t.group === 'rbac.authorization.k8s.io') {
    return name === '.' || name === '..' || /[/%]/.test(name) ? 'may not be "." or ".." and may not contain "/" or "%"' : undefined;
  }
  const [rule, max, what] = t.plural === 'namespaces' && t.group === '' ? [DNS1123_LABEL, 63, 'label'] : [DNS1123_SUBDOMAIN, 253, 'subdomain'];
  if (rule.test(name) && name.length <= max) return undefined;
  return `a lowercase RFC 1123 ${what} must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character`;
}

function combine(a: Matcher, b: Matcher): Matcher {
  return (o) => a(o) && b(o);
}

/** The checks the real server makes on a CRD that matter to us (names, one storage version). */
function crdCauses(o: KObject): StatusCause[] {
  const causes: StatusCause[] = [];
  const spec = o.spec as CrdSpec | undefined;
  const req = (field: string) => causes.push({ reason: 'FieldValueRequired', field, message: 'Required value' });
  if (!isMap(spec)) { req('spec'); return causes; }
  if (!spec.group) req('spec.group');
  if (!spec.names?.plural) req('spec.names.plural');
  if (!spec.names?.kind) req('spec.names.kind');
  if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster') causes.push({ reason: 'FieldValueNotSupported', field: 'spec.scope', message: `Unsupported value: "${String(spec.scope)}": supported values: "Cluster", "Namespaced"` });
  if (spec.names?.plural && spec.group && o.metadata?.name !== `${spec.names.plural}.${spec.group}`) {
    causes.push({ reason: 'FieldValueInvalid', field: 'metadata.name', message: `Invalid value: "${o.metadata?.name}": must be spec.names.plural+"."+spec.group` });
  }
  const versions = Array.isArray(spec.versions) ? spec.versions : [];
  if (!versions.length) req('spec.versions');
  if (versions.length && versions.filter((v) => v.storage).length !== 1) {
    causes.push({ reason: 'FieldValueInvalid', field: 'spec.versions', message: 'Invalid value: must have exactly one version marked as storage version' });
  }
  return causes;
}

/** The latest time an Event says it was written (lastTimestamp, series, eventTime, creation). */
function lastEventWrite(o: KObject): number {
  const series = o.series as { lastObservedTime?: unknown } | undefined;
  const times = [o.lastTimestamp, o.eventTime, series?.lastObservedTime, o.deprecatedLastTimestamp, o.metadata?.creationTimestamp];
  return Math.max(0, ...times.map((v) => (typeof v === 'string' ? Date.parse(v) || 0 : 0)));
}
