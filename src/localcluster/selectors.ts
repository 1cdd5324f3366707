// Label selectors (=, ==, !=, in, notin, exists, !exists) and field selectors (=, ==, !=).
import { errors } from './status.js';
import type { KObject } from './status.js';

export type Matcher = (obj: KObject) => boolean;
const always: Matcher = () => true;

interface Requirement { key: string; op: 'in' | 'notin' | 'exists' | '!exists'; values: string[] }

/** Splits on commas that are not inside parentheses. */
function splitTerms(s: string): string[] {
  const terms: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of s) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) { terms.push(cur); cur = ''; } else cur += ch;
  }
  terms.push(cur);
  return terms.map((t) => t.trim()).filter((t) => t !== '');
}

const LABEL_KEY = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const LABEL_VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/;

function parseRequirement(term: string): Requirement {
  const bad = () => errors.badRequest(`unable to parse requirement: invalid label selector ${JSON.stringify(term)}`);
  let m = /^!\s*(\S+)$/.exec(term);
  if (m) return { key: m[1]!, op: '!exists', values: [] };
  m = /^(\S+?)\s+(in|notin)\s+\((.*)\)$/.exec(term);
  if (m) return { key: m[1]!, op: m[2] as 'in' | 'notin', values: m[3]!.split(',').map((v) => v.trim()) };
  m = /^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(term);
  if (m) return { key: m[1]!, op: m[2] === '!=' ? 'notin' : 'in', values: [m[3]!] };
  if (/^[^=!\s()]+$/.test(term)) return { key: term, op: 'exists', values: [] };
  throw bad();
}

export function labelSelector(selector: string | null | undefined): Matcher {
  if (!selector) return always;
  const reqs = splitTerms(selector).map(parseRequirement);
  for (const r of reqs) {
    if (!LABEL_KEY.test(r.key) || r.values.some((v) => !LABEL_VALUE.test(v) || v.length > 63)) {
      throw errors.badRequest(`unable to parse requirement: invalid label selector ${JSON.stringify(selector)}`);
    }
  }
  return (obj) => {
    const labels = obj.metadata?.labels ?? {};
    return reqs.every((r) => {
      const has = Object.hasOwn(labels, r.key);
      switch (r.op) {
        case 'exists': return has;
        case '!exists': return !has;
        case 'in': return has && r.values.includes(labels[r.key]!);
        case 'notin': return !has || !r.values.includes(labels[r.key]!);
      }
    });
  };
}

/** Field paths every kind supports, plus a few per kind (events: involvedObject.*, ...). */
const COMMON_FIELDS = ['metadata.name', 'metadata.namespace'];
const KIND_FIELDS: Record<string, string[]> = {
  Event: [
    'involvedObject.kind', 'involvedObject.namespace', 'involvedObject.name', 'involvedObject.uid', 'involvedObject.apiVersion',
    'involvedObject.resourceVersion', 'involvedObject.fieldPath', 'reason', 'reportingComponent', 'source', 'type',
    'regarding.kind', 'regarding.namespace', 'regarding.name', 'regarding.uid', 'reportingController',
  ],
  Pod: ['spec.nodeName', 'spec.restartPolicy', 'spec.schedulerName', 'spec.serviceAccountName', 'status.phase', 'status.podIP'],
  Secret: ['type'],
  Namespace: ['status.phase'],
  Node: ['spec.unschedulable'],
  ReplicaSet: ['status.replicas'],
  Job: ['status.successful'],
};

function fieldValue(obj: KObject, path: string): string {
  if (path === 'source' && obj.kind === 'Event') return String((obj.source as Record<string, unknown> | undefined)?.component ?? '');
  let cur: unknown = obj;
  for (const part of path.split('.')) cur = cur && typeof cur === 'object' ? (cur as Record<string, unknown>)[part] : undefined;
  return cur === undefined || cur === null ? '' : String(cur);
}

export function fieldSelector(selector: string | null | undefined, kind: string): Matcher {
  if (!selector) return always;
  const allowed = new Set([...COMMON_FIELDS, ...(KIND_FIELDS[kind] ?? [])]);
  const reqs = splitTerms(selector).map((term) => {
    const m = /^([^=!\s]+)\s*(==|=|!=)\s*(.*)$/.exec(term);
    if (!m) throw errors.badRequest(`invalid selector: '${selector}'; can't understand '${term}'`);
    if (!allowed.has(m[1]!)) throw errors.badRequest(`field label not supported: ${m[1]}`);
    return { path: m[1]!, negate: m[2] === '!=', value: m[3]!.trim() };
  });
  return (obj) => reqs.every((r) => (fieldValue(obj, r.path) === r.value) !== r.negate);
}

export function labelValueValid(v: string): boolean {
  return v.length <= 63 && LABEL_VALUE.test(v);
}
export function labelKeyValid(k: string): boolean {
  const name = k.includes('/') ? k.slice(k.indexOf('/') + 1) : k;
  return LABEL_KEY.test(k) && name.length <= 63 && k.length <= 317;
}
