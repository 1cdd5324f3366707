// Kubernetes' protobuf request bodies, read for the kinds kubectl sends that way. Since 1.32 kubectl
// writes built-in kinds through client-go's typed clients in protobuf (`kubectl create secret`,
// `create namespace`, `auth can-i`, `create token`, ...), and a real API server reads it; the
// local cluster answered 415, so a current kubectl could not follow the README. The body is the
// magic `k8s\0` and a runtime.Unknown (its TypeMeta, the object's own bytes); the object is
// decoded by the field table of its kind below, into the JSON a client would have sent. A kind
// or a field not in the tables is 415 saying what to do instead: nothing is dropped silently.
import { ApiError, errors } from './status.js';
import type { KObject } from './status.js';

export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]); // "k8s\0"

/** `bytes` is base64 as in JSON; `raw` keeps the bytes (the envelope's object, decoded next). */
type Scalar = 'string' | 'bool' | 'int32' | 'int64' | 'bytes' | 'raw';
/** A field's type: a scalar, a message of the table, a map of string to a value type. */
type FieldType = Scalar | { message: string } | { map: Scalar | { message: string } };
/** Field number -> [JSON name, type, repeated]. */
type Message = Record<number, [string, FieldType, boolean?]>;

const msg = (message: string) => ({ message });
const strings = (name: string): [string, FieldType, boolean] => [name, 'string', true];

// Field numbers from k8s.io/api and k8s.io/apimachinery (the wire format of their generated.proto).
const MESSAGES: Record<string, Message> = {
  Unknown: { 1: ['typeMeta', msg('TypeMeta')], 2: ['raw', 'raw'], 3: ['contentEncoding', 'string'], 4: ['contentType', 'string'] },
  TypeMeta: { 1: ['apiVersion', 'string'], 2: ['kind', 'string'] },
  ObjectMeta: {
    1: ['name', 'string'], 2: ['generateName', 'string'], 3: ['namespace', 'string'], 4: ['selfLink', 'string'], 5: ['uid', 'string'],
    6: ['resourceVersion', 'string'], 7: ['generation', 'int64'], 8: ['creationTimestamp', msg('Time')], 9: ['deletionTimestamp', msg('Time')],
    10: ['deletionGracePeriodSeconds', 'int64'], 11: ['labels', { map: 'string' }], 12: ['annotations', { map: 'string' }],
    13: ['ownerReferences', msg('OwnerReference'), true], 14: strings('finalizers'), 17: ['managedFields', msg('ManagedFieldsEntry'), true],
  },
  OwnerReference: { 1: ['kind', 'string'], 3: ['name', 'string'], 4: ['uid', 'string'], 5: ['apiVersion', 'string'], 6: ['controller', 'bool'], 7: ['blockOwnerDeletion', 'bool'] },
  ManagedFieldsEntry: { 1: ['manager', 'string'], 2: ['operation', 'string'], 3: ['apiVersion', 'string'], 4: ['time', msg('Time')], 6: ['fieldsType', 'string'], 7: ['fieldsV1', msg('FieldsV1')], 8: ['subresource', 'string'] },
  FieldsV1: { 1: ['Raw', 'raw'] },
  Time: { 1: ['seconds', 'int64'], 2: ['nanos', 'int32'] },
  Quantity: { 1: ['string', 'string'] },
  /** A status sent with an object to create: the server writes status, so its content is not read. */
  Status: {},
  LabelSelector: { 1: ['matchLabels', { map: 'string' }], 2: ['matchExpressions', msg('LabelSelectorRequirement'), true] },
  LabelSelectorRequirement: { 1: ['key', 'string'], 2: ['operator', 'string'], 3: strings('values') },
  ObjectReference: { 1: ['kind', 'string'], 2: ['namespace', 'string'], 3: ['name', 'string'], 4: ['uid', 'string'], 5: ['apiVersion', 'string'], 6: ['resourceVersion', 'string'], 7: ['fieldPath', 'string'] },
  LocalObjectReference: { 1: ['name', 'string'] },
  // core/v1
  Namespace: { 1: ['metadata', msg('ObjectMeta')], 2: ['spec', msg('NamespaceSpec')], 3: ['status', msg('Status')] },
  NamespaceSpec: { 1: strings('finalizers') },
  Secret: { 1: ['metadata', msg('ObjectMeta')], 2: ['data', { map: 'bytes' }], 3: ['type', 'string'], 4: ['stringData', { map: 'string' }], 5: ['immutable', 'bool'] },
  ConfigMap: { 1: ['metadata', msg('ObjectMeta')], 2: ['data', { map: 'string' }], 3: ['binaryData', { map: 'bytes' }], 4: ['immutable', 'bool'] },
  ServiceAccount: { 1: ['metadata', msg('ObjectMeta')], 2: ['secrets', msg('ObjectReference'), true], 3: ['imagePullSecrets', msg('LocalObjectReference'), true], 4: ['automountServiceAccountToken', 'bool'] },
  ResourceQuota: { 1: ['metadata', msg('ObjectMeta')], 2: ['spec', msg('ResourceQuotaSpec')], 3: ['status', msg('Status')] },
  ResourceQuotaSpec: { 1: ['hard', { map: msg('Quantity') }], 2: strings('scopes'), 3: ['scopeSelector', msg('ScopeSelector')] },
  ScopeSelector: { 1: ['matchExpressions', msg('ScopedResourceSelectorRequirement'), true] },
  ScopedResourceSelectorRequirement: { 1: ['scopeName', 'string'], 2: ['operator', 'string'], 3: strings('values') },
  // rbac.authorization.k8s.io/v1
  Role: { 1: ['metadata', msg('ObjectMeta')], 2: ['rules', msg('PolicyRule'), true] },
  ClusterRole: { 1: ['metadata', msg('ObjectMeta')], 2: ['rules', msg('PolicyRule'), true], 3: ['aggregationRule', msg('AggregationRule')] },
  AggregationRule: { 1: ['clusterRoleSelectors', msg('LabelSelector'), true] },
  PolicyRule: { 1: strings('verbs'), 2: strings('apiGroups'), 3: strings('resources'), 4: strings('resourceNames'), 5: strings('nonResourceURLs') },
  RoleBinding: { 1: ['metadata', msg('ObjectMeta')], 2: ['subjects', msg('Subject'), true], 3: ['roleRef', msg('RoleRef')] },
  ClusterRoleBinding: { 1: ['metadata', msg('ObjectMeta')], 2: ['subjects', msg('Subject'), true], 3: ['roleRef', msg('RoleRef')] },
  Subject: { 1: ['kind', 'string'], 2: ['apiGroup', 'string'], 3: ['name', 'string'], 4: ['namespace', 'string'] },
  RoleRef: { 1: ['apiGroup', 'string'], 2: ['kind', 'string'], 3: ['name', 'string'] },
  // authorization.k8s.io/v1 (kubectl auth can-i)
  SelfSubjectAccessReview: { 1: ['metadata', msg('ObjectMeta')], 2: ['spec', msg('SelfSubjectAccessReviewSpec')], 3: ['status', msg('Status')] },
  SelfSubjectAccessReviewSpec: { 1: ['resourceAttributes', msg('ResourceAttributes')], 2: ['nonResourceAttributes', msg('NonResourceAttributes')] },
  ResourceAttributes: {
    1: ['namespace', 'string'], 2: ['verb', 'string'], 3: ['group', 'string'], 4: ['version', 'string'], 5: ['resource', 'string'],
    6: ['subresource', 'string'], 7: ['name', 'string'], 8: ['fieldSelector', msg('SelectorAttributes')], 9: ['labelSelector', msg('SelectorAttributes')],
  },
  SelectorAttributes: { 1: ['rawSelector', 'string'], 2: ['requirements', msg('LabelSelectorRequirement'), true] },
  NonResourceAttributes: { 1: ['path', 'string'], 2: ['verb', 'string'] },
  SelfSubjectRulesReview: { 1: ['metadata', msg('ObjectMeta')], 2: ['spec', msg('SelfSubjectRulesReviewSpec')], 3: ['status', msg('Status')] },
  SelfSubjectRulesReviewSpec: { 1: ['namespace', 'string'] },
  // authentication.k8s.io/v1 (kubectl create token)
  TokenRequest: { 1: ['metadata', msg('ObjectMeta')], 2: ['spec', msg('TokenRequestSpec')], 3: ['status', msg('Status')] },
  TokenRequestSpec: { 1: strings('audiences'), 3: ['boundObjectRef', msg('BoundObjectReference')], 4: ['expirationSeconds', 'int64'] },
  BoundObjectReference: { 1: ['kind', 'string'], 2: ['apiVersion', 'string'], 3: ['name', 'string'], 4: ['uid', 'string'] },
  // scheduling.k8s.io/v1
  PriorityClass: { 1: ['metadata', msg('ObjectMeta')], 2: ['value', 'int32'], 3: ['globalDefault', 'bool'], 4: ['description', 'string'], 5: ['preemptionPolicy', 'string'] },
};

/** The kinds read in protobuf, by apiVersion: a kind's name is its message's. */
const KINDS: Record<string, string[]> = {
  v1: ['Namespace', 'Secret', 'ConfigMap', 'ServiceAccount', 'ResourceQuota'],
  'rbac.authorization.k8s.io/v1': ['Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding'],
  'authorization.k8s.io/v1': ['SelfSubjectAccessReview', 'SelfSubjectRulesReview'],
  'authentication.k8s.io/v1': ['TokenRequest'],
  'scheduling.k8s.io/v1': ['PriorityClass'],
};

const unsupported = (what: string) => errors.unsupportedMediaType(
  `${what}: the svc local cluster reads protobuf bodies of ${Object.values(KINDS).flat().join(', ')} only; send it as JSON or YAML (kubectl apply -f, kubectl create -f)`,
);

class Reader {
  pos = 0;
  constructor(readonly buf: Buffer, readonly end = buf.length) {}
  varint(): bigint {
    let result = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      if (this.pos >= this.end) throw new Error('truncated varint');
      const byte = this.buf[this.pos++]!;
      result |= BigInt(byte & 0x7f) << shift;
      if (byte < 0x80) return result;
    }
    throw new Error('varint too long');
  }
  bytes(): Buffer {
    const length = Number(this.varint());
    if (length > this.end - this.pos) throw new Error('truncated field');
    const out = this.buf.subarray(this.pos, this.pos + length);
    this.pos += length;
    return out;
  }
  skip(wireType: number): void {
    if (wireType === 0) this.varint();
    else if (wireType === 1) this.pos += 8;
    else if (wireType === 2) this.bytes();
    else if (wireType === 5) this.pos += 4;
    else throw new Error(`wire type ${wireType}`);
    if (this.pos > this.end) throw new Error('truncated field');
  }
}

function scalar(type: Scalar, wireType: number, r: Reader): unknown {
  if (type === 'string' || type === 'bytes' || type === 'raw') {
    if (wireType !== 2) throw new Error(`a ${type} with wire type ${wireType}`);
    const b = r.bytes();
    return type === 'raw' ? b : b.toString(type === 'string' ? 'utf8' : 'base64');
  }
  if (wireType !== 0) throw new Error(`a ${type} with wire type ${wireType}`);
  const v = BigInt.asIntN(64, r.varint());
  if (type === 'bool') return v !== 0n;
  return type === 'int32' ? Number(BigInt.asIntN(32, v)) : Number(v);
}

/** One value of `type` at the reader (a message or map entry is length-delimited). */
function value(type: Scalar | { message: string }, wireType: number, r: Reader, path: string): unknown {
  if (typeof type === 'string') return scalar(type, wireType, r);
  if (wireType !== 2) throw new Error(`${path} with wire type ${wireType}`);
  const bytes = r.bytes();
  return decodeMessage(type.message, bytes, path);
}

function decodeMessage(name: string, buf: Buffer, path: string): unknown {
  const fields = MESSAGES[name]!;
  const r = new Reader(buf);
  const out: Record<string, unknown> = {};
  while (r.pos < r.end) {
    const key = r.varint();
    const number = Number(key >> 3n);
    const wireType = Number(key & 7n);
    if (name === 'Status') { r.skip(wireType); continue; }
    const field = fields[number];
    if (!field) throw unsupported(`field ${number} of ${path} (${name}) is not one it knows`);
    const [jsonName, type, repeated] = field;
    const at = `${path}.${jsonName}`;
    if (typeof type === 'object' && 'map' in type) {
      const entry = new Reader(r.bytes());
      let k = '';
      let v: unknown;
      while (entry.pos < entry.end) {
        const ek = entry.varint();
        const n = Number(ek >> 3n);
        if (n === 1) k = scalar('string', Number(ek & 7n), entry) as string;
        else if (n === 2) v = value(type.map, Number(ek & 7n), entry, `${at}[${k}]`);
        else entry.skip(Number(ek & 7n));
      }
      // an own property whatever the key (a label named __proto__ is data, as JSON.parse makes it)
      Object.defineProperty((out[jsonName] ??= {}) as object, k, { value: v ?? (type.map === 'string' || type.map === 'bytes' ? '' : {}), enumerable: true, writable: true, configurable: true });
    } else if (repeated && wireType === 2 && typeof type === 'string' && type !== 'string' && type !== 'bytes' && type !== 'raw') {
      const packed = new Reader(r.bytes()); // packed scalars
      const list = (out[jsonName] ??= []) as unknown[];
      while (packed.pos < packed.end) list.push(scalar(type, 0, packed));
    } else {
      const v = value(type, wireType, r, at);
      if (repeated) ((out[jsonName] ??= []) as unknown[]).push(v);
      // Go's protobuf writes a plain string or number field even when empty; its JSON omits it
      // (omitempty). Booleans stay: an optional false (automountServiceAccountToken) means false.
      else if (v !== undefined && v !== '' && v !== 0) out[jsonName] = v;
    }
  }
  return shape(name, out);
}

/** The JSON form of messages that are not objects in JSON: times and quantities are strings, a zero time is absent. */
function shape(name: string, out: Record<string, unknown>): unknown {
  if (name === 'Time') return out.seconds ? new Date(Number(out.seconds) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z') : undefined;
  if (name === 'Quantity') return out.string ?? '0';
  if (name === 'FieldsV1') return out.Raw === undefined ? {} : JSON.parse((out.Raw as Buffer).toString('utf8')) as unknown;
  return out;
}

/** The object a protobuf request body holds, as JSON; 415 for what the tables do not cover, 400 for bytes that are not protobuf. */
export function decodeProtobufObject(body: Buffer): KObject {
  if (body.length < MAGIC.length || !body.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw errors.badRequest('the request body could not be decoded: a protobuf body starts with the bytes "k8s\\0"');
  }
  let unknown: { typeMeta?: { apiVersion?: string; kind?: string }; raw?: Buffer; contentEncoding?: string };
  try {
    unknown = decodeMessage('Unknown', body.subarray(MAGIC.length), 'the envelope') as typeof unknown;
  } catch (e) {
    if (e instanceof ApiError) throw e;
    throw errors.badRequest(`the request body could not be decoded: ${(e as Error).message}`);
  }
  const apiVersion = unknown.typeMeta?.apiVersion ?? '';
  const kind = unknown.typeMeta?.kind ?? '';
  if (unknown.contentEncoding) throw unsupported(`a ${kind} in content encoding ${unknown.contentEncoding}`);
  if (!KINDS[apiVersion]?.includes(kind)) throw unsupported(`a ${kind || 'body'} of ${apiVersion || 'no apiVersion'} was sent in protobuf`);
  try {
    const object = decodeMessage(kind, unknown.raw ?? Buffer.alloc(0), kind) as Record<string, unknown>;
    return { apiVersion, kind, ...object } as KObject;
  } catch (e) {
    if (e instanceof ApiError) throw e;
    throw errors.badRequest(`the request body could not be decoded: ${kind}: ${(e as Error).message}`);
  }
}
