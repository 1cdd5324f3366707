// `as=Table` responses: a CRD's additionalPrinterColumns (JSONPath subset) or a built-in's
// columns, plus Name (and Age), with dates shown as ages like the real server.
import type { PrinterColumn, ResourceType } from './resources.js';
import type { KObject } from './status.js';

type Json = unknown;

/** Evaluates the JSONPath subset printer columns use: .a.b, .a[0].b, ['a.b'], .a[?(@.k=="v")].b */
export function jsonPath(obj: Json, path: string): Json[] {
  let current: Json[] = [obj];
  const re = /\.([A-Za-z0-9_$-]+)|\[(\d+|\*)\]|\['([^']*)'\]|\["([^"]*)"\]|\[\?\(@\.([A-Za-z0-9_.-]+)\s*(==|!=)\s*(?:"([^"]*)"|'([^']*)'|([^)\s]+))\)\]/gy;
  const trimmed = path.trim().replace(/^\{(.*)\}$/, '$1').replace(/^\$/, '');
  let m: RegExpExecArray | null;
  re.lastIndex = 0;
  while (re.lastIndex < trimmed.length && (m = re.exec(trimmed))) {
    const next: Json[] = [];
    for (const c of current) {
      const key = m[1] ?? m[3] ?? m[4];
      if (key !== undefined) {
        if (c && typeof c === 'object' && !Array.isArray(c) && (c as Record<string, Json>)[key] !== undefined) next.push((c as Record<string, Json>)[key]);
      } else if (m[2] !== undefined) {
        if (!Array.isArray(c)) continue;
        if (m[2] === '*') next.push(...c);
        else if (c[Number(m[2])] !== undefined) next.push(c[Number(m[2])]);
      } else if (m[5] !== undefined && Array.isArray(c)) {
        const want = m[7] ?? m[8] ?? m[9]!;
        for (const item of c) {
          const got = jsonPath(item, `.${m[5]}`)[0];
          const same = got !== undefined && String(got) === want;
          if (same === (m[6] === '==')) next.push(item);
        }
      }
    }
    current = next;
  }
  return current;
}

/** k8s.io/apimachinery duration.HumanDuration */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) return hours % 24 === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${hours % 24}h`;
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  const days = Math.floor(hours / 24);
  if (hours < 24 * 365 * 8) return days % 365 === 0 ? `${Math.floor(days / 365)}y` : `${Math.floor(days / 365)}y${days % 365}d`;
  return `${Math.floor(days / 365)}y`;
}

const age = (ts: Json): string => (typeof ts === 'string' ? humanDuration(Date.now() - Date.parse(ts)) : '<unknown>');

interface Column { name: string; type: string; format: string; description: string; priority: number; cell: (o: KObject) => Json }

const get = (o: Json, path: string): Json => jsonPath(o, path)[0];
const count = (v: Json) => (v && typeof v === 'object' ? Object.keys(v).length : 0);
const col = (name: string, cell: Column['cell'], type = 'string', priority = 0): Column => ({ name, type, format: '', description: name, priority, cell });
const NAME: Column = { name: 'Name', type: 'string', format: 'name', description: 'Name must be unique within a namespace.', priority: 0, cell: (o) => o.metadata?.name ?? '' };
const AGE = col('Age', (o) => age(o.metadata?.creationTimestamp));
const CREATED_AT = col('Created At', (o) => o.metadata?.creationTimestamp ?? '', 'date');

const BUILTIN_COLUMNS: Record<string, Column[]> = {
  Namespace: [col('Status', (o) => get(o, '.status.phase') ?? ''), AGE],
  ConfigMap: [col('Data', (o) => count(o.data) + count(o.binaryData), 'integer'), AGE],
  Secret: [col('Type', (o) => o.type ?? 'Opaque'), col('Data', (o) => count(o.data), 'integer'), AGE],
  ServiceAccount: [col('Secrets', (o) => (Array.isArray(o.secrets) ? o.secrets.length : 0), 'integer'), AGE],
  Pod: [
    col('Ready', (o) => {
      const statuses = (get(o, '.status.containerStatuses') as { ready?: boolean }[] | undefined) ?? [];
      const total = (get(o, '.spec.containers') as unknown[] | undefined)?.length ?? 0;
      return `${statuses.filter((s) => s.ready).length}/${total}`;
    }),
    col('Status', (o) => get(o, '.status.phase') ?? 'Pending'),
    col('Restarts', () => 0, 'integer'),
    AGE,
  ],
  Deployment: [
    col('Ready', (o) => `${get(o, '.status.readyReplicas') ?? 0}/${get(o, '.spec.replicas') ?? 1}`),
    col('Up-to-date', (o) => get(o, '.status.updatedReplicas') ?? 0, 'integer'),
    col('Available', (o) => get(o, '.status.availableReplicas') ?? 0, 'integer'),
    AGE,
    col('Containers', (o) => jsonPath(o, '.spec.template.spec.containers[*].name').join(','), 'string', 1),
    col('Images', (o) => jsonPath(o, '.spec.template.spec.containers[*].image').join(','), 'string', 1),
    col('Selector', (o) => Object.entries((get(o, '.spec.selector.matchLabels') as Record<string, string> | undefined) ?? {}).map(([k, v]) => `${k}=${v}`).join(','), 'string', 1),
  ],
  Service: [
    col('Type', (o) => get(o, '.spec.type') ?? 'ClusterIP'),
    col('Cluster-IP', (o) => get(o, '.spec.clusterIP') ?? '<none>'),
    col('External-IP', (o) => ((get(o, '.spec.externalIPs') as string[] | undefined) ?? []).join(',') || '<none>'),
    col('Port(s)', (o) => ((get(o, '.spec.ports') as { port: number; protocol?: string }[] | undefined) ?? []).map((p) => `${p.port}/${p.protocol ?? 'TCP'}`).join(',') || '<none>'),
    AGE,
  ],
  Event: [
    col('Last Seen', (o) => age(o.lastTimestamp ?? o.eventTime ?? o.metadata?.creationTimestamp)),
    col('Type', (o) => o.type ?? ''),
    col('Reason', (o) => o.reason ?? ''),
    col('Object', (o) => {
      const ref = (o.involvedObject ?? o.regarding) as { kind?: string; name?: string } | undefined;
      return ref ? `${String(ref.kind ?? '').toLowerCase()}/${ref.name ?? ''}` : '';
    }),
    col('Message', (o) => o.message ?? o.note ?? ''),
  ],
  Lease: [col('Holder', (o) => get(o, '.spec.holderIdentity') ?? ''), AGE],
  CustomResourceDefinition: [CREATED_AT],
  Role: [CREATED_AT],
  ClusterRole: [CREATED_AT],
  RoleBinding: [col('Role', (o) => `${get(o, '.roleRef.kind')}/${get(o, '.roleRef.name')}`), AGE],
  ClusterRoleBinding: [col('Role', (o) => `${get(o, '.roleRef.kind')}/${get(o, '.roleRef.name')}`), AGE],
};

function printerColumn(c: PrinterColumn): Column {
  return {
    name: c.name,
    type: c.type,
    format: c.format ?? '',
    description: c.description ?? '',
    priority: c.priority ?? 0,
    cell: (o) => {
      const values = jsonPath(o, c.jsonPath);
      if (values.length === 0) return null;
      const v = values.length === 1 ? values[0] : values.map((x) => (typeof x === 'object' ? JSON.stringify(x) : String(x))).join(',');
      if (c.type === 'date') return age(v);
      return typeof v === 'object' && v !== null ? JSON.stringify(v) : v;
    },
  };
}

function columnsFor(t: ResourceType): Column[] {
  if (!t.builtin) {
    const declared = t.printerColumns ?? [];
    return declared.length ? [NAME, ...declared.map(printerColumn)] : [NAME, AGE];
  }
  // Events are the one common kind whose table has no Name column.
  if (t.kind === 'Event') return BUILTIN_COLUMNS.Event!;
  return [NAME, ...(BUILTIN_COLUMNS[t.kind] ?? [AGE])];
}

export type IncludeObject = 'None' | 'Metadata' | 'Object';

export function toTable(t: ResourceType, objects: KObject[], include: IncludeObject, listMeta: Record<string, unknown>): KObject {
  const columns = columnsFor(t);
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: listMeta,
    columnDefinitions: columns.map(({ cell: _cell, ...def }) => def),
    rows: objects.map((o) => ({
      cells: columns.map((c) => c.cell(o)),
      object: include === 'Object' ? o : include === 'Metadata' ? { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: o.metadata } : undefined,
    })),
  };
}
