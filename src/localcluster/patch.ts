// The three patch formats: JSON merge patch (RFC 7386), JSON patch (RFC 6902, with `test`)
// and a subset of Kubernetes strategic merge patch (built-in kinds only).
import { ApiError, errors } from './status.js';

type Json = unknown;
type JsonMap = Record<string, Json>;
const isMap = (v: Json): v is JsonMap => typeof v === 'object' && v !== null && !Array.isArray(v);
const equal = (a: Json, b: Json): boolean => JSON.stringify(a) === JSON.stringify(b);

export function mergePatch(target: Json, patch: Json): Json {
  if (!isMap(patch)) return structuredClone(patch);
  const out: JsonMap = isMap(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

// --- JSON patch -------------------------------------------------------------------------

interface Op { op: string; path: string; value?: Json; from?: string }

function pointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw new Error(`invalid JSON pointer ${JSON.stringify(path)}`);
  return path.slice(1).split('/').map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function parentOf(doc: Json, tokens: string[], path: string): { parent: JsonMap | Json[]; key: string } {
  let cur = doc;
  for (const t of tokens.slice(0, -1)) {
    if (Array.isArray(cur)) cur = cur[Number(t)];
    else if (isMap(cur)) cur = cur[t];
    else cur = undefined;
    if (cur === undefined) throw new Error(`path ${JSON.stringify(path)} does not exist`);
  }
  if (!isMap(cur) && !Array.isArray(cur)) throw new Error(`path ${JSON.stringify(path)} does not exist`);
  return { parent: cur, key: tokens[tokens.length - 1]! };
}

function index(arr: Json[], key: string, path: string, forInsert: boolean): number {
  if (forInsert && key === '-') return arr.length;
  if (!/^(0|[1-9]\d*)$/.test(key)) throw new Error(`invalid array index in ${JSON.stringify(path)}`);
  const i = Number(key);
  if (i > arr.length || (!forInsert && i === arr.length)) throw new Error(`array index out of bounds in ${JSON.stringify(path)}`);
  return i;
}

function getAt(doc: Json, path: string): Json {
  let cur = doc;
  for (const t of pointer(path)) {
    if (Array.isArray(cur)) cur = cur[Number(t)];
    else if (isMap(cur) && Object.hasOwn(cur, t)) cur = cur[t];
    else throw new Error(`path ${JSON.stringify(path)} does not exist`);
    if (cur === undefined) throw new Error(`path ${JSON.stringify(path)} does not exist`);
  }
  return cur;
}

function removeAt(doc: Json, path: string): Json {
  const tokens = pointer(path);
  if (tokens.length === 0) throw new Error('cannot remove the document root');
  const { parent, key } = parentOf(doc, tokens, path);
  if (Array.isArray(parent)) return parent.splice(index(parent, key, path, false), 1)[0];
  if (!Object.hasOwn(parent, key)) throw new Error(`path ${JSON.stringify(path)} does not exist`);
  const old = parent[key];
  delete parent[key];
  return old;
}

function addAt(doc: Json, path: string, value: Json, replace: boolean): Json {
  const tokens = pointer(path);
  if (tokens.length === 0) return value;
  const { parent, key } = parentOf(doc, tokens, path);
  if (Array.isArray(parent)) {
    const i = index(parent, key, path, !replace);
    parent.splice(i, replace ? 1 : 0, value);
  } else {
    if (replace && !Object.hasOwn(parent, key)) throw new Error(`path ${JSON.stringify(path)} does not exist`);
    parent[key] = value;
  }
  return doc;
}

/** Applies RFC 6902 operations; a bad patch is a 400, a failed operation (or `test`) a 422. */
export function jsonPatch(target: Json, ops: Json): Json {
  if (!Array.isArray(ops)) throw errors.badRequest('a JSON patch must be an array of operations');
  let doc = structuredClone(target);
  for (const raw of ops as Op[]) {
    if (!isMap(raw) || typeof raw.op !== 'string' || typeof raw.path !== 'string') throw errors.badRequest(`invalid JSON patch operation: ${JSON.stringify(raw)}`);
    try {
      switch (raw.op) {
        case 'add': doc = addAt(doc, raw.path, structuredClone(raw.value), false); break;
        case 'replace': doc = addAt(doc, raw.path, structuredClone(raw.value), true); break;
        case 'remove': removeAt(doc, raw.path); break;
        case 'move': { const v = removeAt(doc, raw.from ?? ''); doc = addAt(doc, raw.path, v, false); break; }
        case 'copy': doc = addAt(doc, raw.path, structuredClone(getAt(doc, raw.from ?? '')), false); break;
        case 'test':
          if (!equal(getAt(doc, raw.path), raw.value)) throw new Error(`testing value ${raw.path} failed: test failed`);
          break;
        default: throw errors.badRequest(`unknown JSON patch operation ${JSON.stringify(raw.op)}`);
      }
    } catch (e) {
      if (e instanceof ApiError) throw e;
      throw new ApiError(422, 'Invalid', (e as Error).message);
    }
  }
  return doc;
}

// --- strategic merge patch ---------------------------------------------------------------

/** patchMergeKey of the built-in list fields kubectl and helm patch; other lists are replaced. */
const MERGE_KEYS: Record<string, string> = {
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  env: 'name',
  volumes: 'name',
  volumeMounts: 'mountPath',
  volumeDevices: 'devicePath',
  imagePullSecrets: 'name',
  conditions: 'type',
  ownerReferences: 'uid',
  hostAliases: 'ip',
  topologySpreadConstraints: 'topologyKey',
  secrets: 'name',
};
/** Lists of scalars merged as sets. */
const MERGED_SCALAR_LISTS = new Set(['finalizers']);

function mergeKeyOf(field: string, items: Json[]): string | undefined {
  if (field === 'ports') return items.some((i) => isMap(i) && 'containerPort' in i) ? 'containerPort' : 'port';
  return MERGE_KEYS[field];
}

export function strategicMergePatch(target: Json, patch: Json): Json {
  if (!isMap(patch)) throw errors.badRequest('a strategic merge patch must be a JSON object');
  return smpMap(isMap(target) ? target : {}, patch);
}

function smpMap(target: JsonMap, patch: JsonMap): JsonMap {
  if (patch.$patch === 'replace') {
    const rest = { ...patch };
    delete rest.$patch;
    return stripDirectives(rest) as JsonMap;
  }
  if (patch.$patch === 'delete') return {};
  const out: JsonMap = { ...target };
  const orders: [string, Json[]][] = [];
  for (const [k, v] of Object.entries(patch)) {
    if (k === '$patch') continue;
    if (k === '$retainKeys') continue;
    if (k.startsWith('$setElementOrder/')) { if (Array.isArray(v)) orders.push([k.slice(17), v]); continue; }
    if (k.startsWith('$deleteFromPrimitiveList/')) {
      const field = k.slice(25);
      if (Array.isArray(out[field]) && Array.isArray(v)) out[field] = (out[field] as Json[]).filter((x) => !v.some((d) => equal(d, x)));
      continue;
    }
    if (v === null) { delete out[k]; continue; }
    if (isMap(v)) out[k] = smpMap(isMap(out[k]) ? (out[k] as JsonMap) : {}, v);
    else if (Array.isArray(v)) out[k] = smpList(k, Array.isArray(out[k]) ? (out[k] as Json[]) : [], v);
    else out[k] = v;
  }
  if (Array.isArray(patch.$retainKeys)) {
    const keep = new Set(patch.$retainKeys as string[]);
    for (const k of Object.keys(out)) if (!keep.has(k)) delete out[k];
  }
  for (const [field, order] of orders) if (Array.isArray(out[field])) out[field] = reorder(field, out[field] as Json[], order);
  return out;
}

function smpList(field: string, target: Json[], patch: Json[]): Json[] {
  if (patch.some((p) => isMap(p) && p.$patch === 'replace')) {
    return patch.filter((p) => !(isMap(p) && p.$patch === 'replace')).map(stripDirectives);
  }
  if (MERGED_SCALAR_LISTS.has(field)) return [...target, ...patch.filter((p) => !target.some((t) => equal(t, p)))];
  const key = mergeKeyOf(field, [...target, ...patch]);
  if (!key) return patch.map(stripDirectives);
  const out = [...target];
  for (const item of patch) {
    if (!isMap(item)) continue;
    const at = out.findIndex((t) => isMap(t) && equal(t[key], item[key]));
    if (item.$patch === 'delete') { if (at >= 0) out.splice(at, 1); continue; }
    if (at >= 0) out[at] = smpMap(out[at] as JsonMap, item);
    else out.push(stripDirectives(item));
  }
  return out;
}

function reorder(field: string, list: Json[], order: Json[]): Json[] {
  const key = mergeKeyOf(field, list);
  const id = (x: Json) => (key && isMap(x) ? JSON.stringify(x[key]) : JSON.stringify(x));
  const rank = new Map(order.map((o, i) => [key && isMap(o) ? JSON.stringify(o[key]) : JSON.stringify(o), i]));
  return [...list].sort((a, b) => (rank.get(id(a)) ?? order.length) - (rank.get(id(b)) ?? order.length));
}

function stripDirectives(v: Json): Json {
  if (Array.isArray(v)) return v.map(stripDirectives);
  if (!isMap(v)) return v;
  const out: JsonMap = {};
  for (const [k, x] of Object.entries(v)) if (!k.startsWith('$')) out[k] = stripDirectives(x);
  return out;
}
