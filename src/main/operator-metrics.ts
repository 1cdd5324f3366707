// The operator's object metrics, read from the leader's informer caches at scrape time (a
// standby shows none, so summing over replicas never double counts): sessions by status,
// sandboxes by state and provider, trigger fires by source and outcome, queued fires; and the
// scheduler's lateness (a cron fire's scheduled instant → its TriggerFire), observed as fires appear.
import { countBy, operatorMetrics } from '../lib/metrics.js';
import { SANDBOX, SESSION, TRIGGER_FIRE, type Sandbox, type Session, type TriggerFire } from '../resources/index.js';
import type { Runnable } from '../runtime/index.js';

export function objectMetrics(): Runnable {
  const m = operatorMetrics();
  let active = false;
  return {
    name: 'metrics',
    start(ctx) {
      active = true;
      const startedAt = Date.now();
      const sessions = ctx.informer<Session>(SESSION);
      const sandboxes = ctx.informer<Sandbox>(SANDBOX);
      const fires = ctx.informer<TriggerFire>(TRIGGER_FIRE);
      m.sessions.setSource(() => countBy(sessions.list(), (s) => ({ status: s.status?.status ?? 'pending' })));
      m.sandboxes.setSource(() => countBy(sandboxes.list(), (s) => ({ state: s.status?.state ?? 'pending', provider: s.spec.provider })));
      m.triggerFires.setSource(() => countBy(fires.list(), (f) => ({ source: f.spec.source, outcome: f.status?.phase ?? 'pending' })));
      m.queuedFires.setSource(() => [{ labels: {}, value: fires.list().filter((f) => f.status?.phase === 'queued').length }]);
      fires.on('add', (fire) => {
        if (!active || fire.spec.source !== 'cron') return;
        const created = Date.parse(fire.metadata.creationTimestamp ?? '');
        const scheduled = Date.parse(fire.spec.firedAt);
        // fires listed at start were created before this leader: not ours to time
        if (created >= startedAt - 1000 && Number.isFinite(scheduled)) m.schedulerLateness.observe(Math.max(0, created - scheduled) / 1000);
      });
    },
    stop() {
      active = false;
      for (const gauge of [m.sessions, m.sandboxes, m.triggerFires, m.queuedFires]) gauge.setSource(undefined);
    },
  };
}
