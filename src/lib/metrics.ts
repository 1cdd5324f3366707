// Prometheus metrics (prom-client): one registry per process, served on /metrics by the operator
// and the API. Names follow the Prometheus conventions: `svc_` prefix, `_total` counters,
// `_seconds` durations. Each component's set is created on first use, so a process shows only
// the metrics of the component it runs (plus the process_* defaults).
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type LabelValues } from 'prom-client';

export const registry = new Registry();
let processMetrics = false;

/** Node process metrics (CPU, memory, event loop lag, ...) as svc_process_* and svc_nodejs_*. */
export function enableProcessMetrics(): void {
  if (processMetrics) return;
  processMetrics = true;
  collectDefaultMetrics({ register: registry, prefix: 'svc_' });
}

export async function metricsText(): Promise<{ contentType: string; body: string }> {
  return { contentType: registry.contentType, body: await registry.metrics() };
}

function once<T>(make: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= make());
}

const registers = [registry];
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** Reads the current value of a gauge at scrape time (object counts from the informer caches). */
type Sample = { labels: Record<string, string>; value: number };
type SampleSource = () => Sample[];

function sourcedGauge(name: string, help: string, labelNames: string[]): { gauge: Gauge; setSource(source: SampleSource | undefined): void } {
  let source: SampleSource | undefined;
  const gauge: Gauge = new Gauge({
    name, help, labelNames, registers,
    collect() {
      gauge.reset();
      for (const s of source?.() ?? []) gauge.set(s.labels, s.value);
    },
  });
  return { gauge, setSource: (s) => { source = s; } };
}

/** Counts of `keyOf(item)` over `items`, as gauge samples. */
export function countBy<T>(items: readonly T[], keyOf: (item: T) => Record<string, string>): Sample[] {
  const counts = new Map<string, Sample>();
  for (const item of items) {
    const labels = keyOf(item);
    const id = JSON.stringify(labels);
    const sample = counts.get(id) ?? { labels, value: 0 };
    sample.value++;
    counts.set(id, sample);
  }
  return [...counts.values()];
}

const queueDepths = new Map<string, () => number>();

export const operatorMetrics = once(() => {
  const queueDepth = new Gauge({
    name: 'svc_workqueue_depth', help: 'Keys waiting in a controller work queue.', labelNames: ['controller'], registers,
    collect() {
      queueDepth.reset();
      for (const [controller, depth] of queueDepths) queueDepth.set({ controller }, depth());
    },
  });
  return {
    reconciles: new Counter({ name: 'svc_reconcile_total', help: 'Reconciles by controller and result (success, requeue, error).', labelNames: ['controller', 'result'], registers }),
    reconcileDuration: new Histogram({ name: 'svc_reconcile_duration_seconds', help: 'Time one reconcile took.', labelNames: ['controller'], buckets: DURATION_BUCKETS, registers }),
    queueDepth,
    queueLatency: new Histogram({ name: 'svc_workqueue_queue_duration_seconds', help: 'Time a key waited in the work queue before its reconcile started.', labelNames: ['controller'], buckets: DURATION_BUCKETS, registers }),
    leader: new Gauge({ name: 'svc_operator_leader', help: '1 while this replica holds the Lease and runs the controllers.', registers }),
    sessions: sourcedGauge('svc_sessions', 'Sessions by status (leader only).', ['status']),
    sandboxes: sourcedGauge('svc_sandboxes', 'Sandboxes by state and provider (leader only).', ['state', 'provider']),
    triggerFires: sourcedGauge('svc_trigger_fires', 'TriggerFires by source and outcome (fired, queued, failed, pending) (leader only).', ['source', 'outcome']),
    queuedFires: sourcedGauge('svc_trigger_fires_queued', 'TriggerFires waiting for session capacity (leader only).', []),
    schedulerLateness: new Histogram({ name: 'svc_scheduler_lateness_seconds', help: 'From a cron fire\'s scheduled instant to its TriggerFire.', buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300], registers }),
  };
});

/** A work queue's depth, read at scrape time; undefined removes it. */
export function trackQueueDepth(controller: string, depth: (() => number) | undefined): void {
  operatorMetrics();
  if (depth) queueDepths.set(controller, depth);
  else queueDepths.delete(controller);
}

export const apiMetrics = once(() => ({
  requests: new Counter({ name: 'svc_http_requests_total', help: 'API requests by method, route template and status.', labelNames: ['method', 'route', 'status'], registers }),
  requestDuration: new Histogram({ name: 'svc_http_request_duration_seconds', help: 'API request duration by method and route template.', labelNames: ['method', 'route'], buckets: DURATION_BUCKETS, registers }),
  webhookDeliveries: new Counter({ name: 'svc_webhook_deliveries_total', help: 'Webhook deliveries by response status.', labelNames: ['status'], registers }),
  gitPushes: new Counter({ name: 'svc_git_pushes_total', help: 'Pushes through the git gateway by outcome (accepted, refused).', labelNames: ['outcome'], registers }),
}));

/** The model gateway (docs/gateway.md): what it relayed, per project (by name), provider and model. */
export const llmMetrics = once(() => ({
  tokens: new Counter({ name: 'svc_llm_tokens_total', help: 'Tokens counted by the model gateway from the upstream\'s usage, by direction (input, output).', labelNames: ['project', 'provider', 'model', 'direction'], registers }),
  requests: new Counter({ name: 'svc_llm_requests_total', help: 'Requests to the model gateway by upstream status (429: refused by a budget, 502: upstream unreachable).', labelNames: ['project', 'provider', 'status'], registers }),
  duration: new Histogram({ name: 'svc_llm_request_duration_seconds', help: 'Model gateway requests from arrival to the last byte relayed.', labelNames: ['project', 'provider'], buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300], registers }),
  firstByte: new Histogram({ name: 'svc_llm_time_to_first_byte_seconds', help: 'Model gateway requests from arrival to the first byte of the answer.', labelNames: ['project', 'provider'], buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30], registers }),
}));

/**
 * Drops the model gateway's series of a project that is gone: they name projects, and a namespace
 * that makes and deletes projects must not grow /metrics without end. A name in use again starts from zero.
 */
export async function forgetLlmProject(project: string): Promise<void> {
  const metrics: (Counter | Histogram)[] = Object.values(llmMetrics());
  for (const metric of metrics) {
    const series = new Map<string, LabelValues<string>>();
    for (const { labels } of (await metric.get()).values) {
      if (labels.project !== project) continue;
      const { le: _bucket, ...own } = labels as LabelValues<string>; // a histogram's buckets are one series
      series.set(JSON.stringify(own), own);
    }
    for (const labels of series.values()) metric.remove(labels);
  }
}

/** The cron scheduler's own counts (this replica), read at scrape time. */
export interface SchedulerCounts { timers: number; fired: number; duplicates: number; missed: number }

export const schedulerMetrics = once(() => {
  let read: (() => SchedulerCounts) | undefined;
  const counted = (name: string, help: string, pick: (c: SchedulerCounts) => number) => {
    const counter: Counter = new Counter({ name, help, registers, collect() { counter.reset(); if (read) counter.inc(pick(read())); } });
  };
  const timers: Gauge = new Gauge({ name: 'svc_trigger_timers', help: 'Cron triggers with an armed timer on this replica.', registers, collect() { timers.set(read ? read().timers : 0); } });
  counted('svc_trigger_cron_fires_total', 'Cron fires created by this replica.', (c) => c.fired);
  counted('svc_trigger_cron_duplicates_total', 'Cron fires that already existed (another replica or an earlier run created them).', (c) => c.duplicates);
  counted('svc_trigger_missed_fires_total', 'Scheduled instants not fired (older than the catch-up window, or superseded by a later one).', (c) => c.missed);
  return { setSource(source: () => SchedulerCounts): void { read = source; } };
});
