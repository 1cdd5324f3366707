// The cron scheduler: leader-only work (a Runnable of the manager) that creates the TriggerFires
// of cron and run_at triggers. One timer per trigger, armed for its next instant (second
// precision; SVC_TRIGGER_SCHEDULER_INTERVAL_MS is only the longest sleep, a safety resync). The
// hot path evaluates no cron expression: a timer waking on its remembered instant fires it at once.
// Exactly once: a fire is named `<trigger>-<unix seconds of the instant>`, so a second create
// (another replica, a restart, a leader change) is AlreadyExists and counts as done. A timer that
// wakes early fires nothing and re-arms; after downtime only the latest instant within the
// catch-up window fires and older ones are recorded as missed (an Event and a counter).
import { randomUUID } from 'node:crypto';
import { isAlreadyExists, OWNER_UID_INDEX, type KubeClient } from '../../src/kube/index.js';
import { MAX_REQUEUE_DELAY_MS, type ReconcileContext, type Runnable } from '../../src/runtime/index.js';
import { TRIGGER, TRIGGER_FIRE, cronFireName, newTriggerFire, type Trigger, type TriggerFire } from '../../src/resources/index.js';
import { DEFAULT_CATCH_UP_MS, cronVariables, decide, nextCronInstant, scheduleKey } from '../../src/triggers/index.js';

export const DEFAULT_SCHEDULER_INTERVAL_MS = 60_000;

export interface SchedulerOptions {
  /** Longest sleep of a timer (SVC_TRIGGER_SCHEDULER_INTERVAL_MS, default 60 s). */
  maxSleepMs?: number;
  /** Instants older than this when noticed are missed, not fired (default 5 min). */
  catchUpMs?: number;
  now?: () => Date;
  log?: (message: string) => void;
  /** Called after a fire was created (not for a duplicate). */
  onFired?: (fire: TriggerFire, createdAtMs: number) => void;
}

export interface SchedulerStats {
  /** Triggers with an armed timer. */
  timers: number;
  fired: number;
  duplicates: number;
  missed: number;
  errors: number;
}

interface Entry {
  key: string;
  /** Instants at or before it are handled. */
  anchor: Date;
  lastFired?: Date;
  /** The run_at value already fired or missed here (before the status says dormant). */
  runAtDone?: string;
  timer?: NodeJS.Timeout;
  busy?: boolean;
  /** The next instant computed for `cacheKey`: a safety wake-up before it needs no cron evaluation. */
  next?: Date;
  cacheKey?: string;
}

export interface CronScheduler extends Runnable {
  stats(): SchedulerStats;
}

/**
 * Where a trigger's schedule starts when the scheduler first sees it (after a start or a leader
 * change). `lastCronFire` is the instant of its latest cron TriggerFire in the cache: an instant
 * that fired just before a crash is handled even when the Trigger's status (written after the
 * fire) does not say so yet, so it is neither fired again nor counted as missed. Without one
 * (none yet, or pruned) the status's lastFiredAt stands in.
 */
export function initialAnchor(trigger: Trigger, now: Date, lastCronFire?: Date): Date {
  const status = trigger.status ?? {};
  const created = Date.parse(trigger.metadata.creationTimestamp ?? '') || now.getTime();
  const fired = lastCronFire?.getTime() ?? 0;
  if (status.observedSchedule === undefined) return new Date(Math.max(created, fired));
  // The Trigger controller has not seen this schedule yet: it was just edited, so nothing before now fires.
  if (status.observedSchedule !== scheduleKey(trigger.spec)) return now;
  const since = Math.max(created, Date.parse(status.scheduleSince ?? '') || 0, fired || Date.parse(status.lastFiredAt ?? '') || 0);
  return new Date(since);
}

/** The instant of the trigger's latest cron fire the cache holds (the scheduler fires instants in order). */
function latestCronFire(ctx: ReconcileContext, trigger: Trigger): Date | undefined {
  let latest: number | undefined;
  for (const fire of ctx.informer<TriggerFire>(TRIGGER_FIRE).byIndex(OWNER_UID_INDEX, trigger.metadata.uid ?? '')) {
    if (fire.spec?.source !== 'cron' || fire.spec.triggerRef?.name !== trigger.metadata.name) continue;
    const at = Date.parse(fire.spec.firedAt);
    if (at && (latest === undefined || at > latest)) latest = at;
  }
  return latest === undefined ? undefined : new Date(latest);
}

export function cronScheduler(options: SchedulerOptions = {}): CronScheduler {
  // capped: a longer timer would overflow Node's 32-bit delay and fire at once, in a loop
  const maxSleepMs = Math.min(options.maxSleepMs ?? DEFAULT_SCHEDULER_INTERVAL_MS, MAX_REQUEUE_DELAY_MS);
  const catchUpMs = options.catchUpMs ?? DEFAULT_CATCH_UP_MS;
  const now = options.now ?? (() => new Date());
  const log = options.log ?? (() => {});
  const entries = new Map<string, Entry>();
  const stats: SchedulerStats = { timers: 0, fired: 0, duplicates: 0, missed: 0, errors: 0 };
  let ctx: ReconcileContext | undefined;
  /** Bumped by stop(): handlers of an earlier start do nothing. */
  let epoch = 0;

  const keyOf = (t: Trigger) => `${t.metadata.namespace}/${t.metadata.name}`;

  function clear(id: string): void {
    const entry = entries.get(id);
    if (entry?.timer) { clearTimeout(entry.timer); stats.timers--; }
    entries.delete(id);
  }

  function arm(id: string, entry: Entry, delayMs: number): void {
    if (entry.timer) clearTimeout(entry.timer);
    else stats.timers++;
    const mine = epoch;
    entry.timer = setTimeout(() => {
      entry.timer = undefined;
      stats.timers--;
      if (mine === epoch) void evaluate(id);
    }, Number.isNaN(delayMs) ? maxSleepMs : Math.max(0, Math.min(delayMs, maxSleepMs)));
  }

  async function createFire(client: KubeClient, trigger: Trigger, instant: Date, lastFired: Date | undefined): Promise<'created' | 'duplicate'> {
    const spec = trigger.spec;
    const fire = newTriggerFire(trigger, {
      name: cronFireName(trigger.metadata.name!, instant),
      source: 'cron',
      firedAt: instant,
      variables: cronVariables(spec, { schedule: spec.cron ?? spec.runAt ?? '', timezone: spec.timezone, firedAt: instant, lastFiredAt: lastFired }),
      sessionName: randomUUID(),
    });
    try {
      const created = await client.resource<TriggerFire>(TRIGGER_FIRE).create(fire);
      options.onFired?.(created, Date.now());
      return 'created';
    } catch (error) {
      if (isAlreadyExists(error)) return 'duplicate';
      throw error;
    }
  }

  async function evaluate(id: string): Promise<void> {
    if (!ctx) return;
    const mine = epoch;
    const [namespace, name] = id.split('/') as [string, string];
    // the informer decodes what it stores (defaults applied)
    const trigger = ctx.informer<Trigger>(TRIGGER).get(namespace, name);
    if (!trigger || trigger.metadata.deletionTimestamp) { clear(id); return; }
    const at = now();
    const key = scheduleKey(trigger.spec);
    let entry = entries.get(id);
    if (!entry) {
      entry = { key, anchor: initialAnchor(trigger, at, latestCronFire(ctx, trigger)) };
      entries.set(id, entry);
    } else if (entry.key !== key) {
      // A schedule edit never fires at once: only instants after the edit count.
      entry.key = key;
      entry.anchor = at;
    }
    if (entry.busy) return; // the fire in flight re-evaluates when it is done
    const cacheKeyOf = (anchor: Date) => `${key}|${trigger.status?.paused ?? false}|${trigger.status?.dormant ?? false}|${anchor.getTime()}`;
    const known = entry.next && entry.cacheKey === cacheKeyOf(entry.anchor) ? entry.next : undefined;
    if (known && at.getTime() < known.getTime()) {
      if (mine === epoch) arm(id, entry, known.getTime() - at.getTime());
      return;
    }
    // The instant remembered is due and no later one can be (cron's resolution is one second):
    // fire it at once, without evaluating the schedule on the hot path (decide would say the same).
    const lateMs = known ? at.getTime() - known.getTime() : Infinity;
    let instant: Date | null = known && lateMs < 1000 && lateMs <= catchUpMs ? known : null;
    if (!instant) {
      const dormant = trigger.status?.dormant || (trigger.spec.runAt !== undefined && entry.runAtDone === trigger.spec.runAt);
      const decision = decide(trigger.spec, { anchor: entry.anchor, dormant, paused: trigger.status?.paused }, at, { catchUpMs });
      if (decision.missed && !decision.fire) entry.runAtDone = trigger.spec.runAt;
      if (decision.missed) {
        const m = decision.missed;
        stats.missed += m.count;
        entry.anchor = m.last;
        const what = m.count === 1 ? `the instant ${m.first.toISOString()}` : `${m.atLeast ? 'at least ' : ''}${m.count} instants from ${m.first.toISOString()} to ${m.last.toISOString()}`;
        await ctx.client.recordEvent(trigger, {
          type: 'Warning', reason: 'MissedFires',
          message: `${what} passed while no scheduler ran and ${decision.fire ? 'a later one fires instead' : `${m.count === 1 ? 'is' : 'are'} older than the catch-up window (${Math.round(catchUpMs / 1000)} s)`}; not replayed`,
        }).catch((error: Error) => log(`scheduler: recording missed fires of ${id} failed: ${error.message}`));
      }
      instant = decision.fire;
      if (!instant) {
        if (mine !== epoch) return;
        entry.next = decision.next ?? undefined;
        entry.cacheKey = cacheKeyOf(entry.anchor);
        if (decision.next) arm(id, entry, decision.next.getTime() - now().getTime());
        else if (entry.timer) { clearTimeout(entry.timer); entry.timer = undefined; stats.timers--; }
        return;
      }
    }
    entry.busy = true;
    try {
      const lastFired = entry.lastFired ?? (trigger.status?.lastFiredAt ? new Date(trigger.status.lastFiredAt) : undefined);
      const outcome = await createFire(ctx.client, trigger, instant, lastFired);
      if (outcome === 'created') stats.fired++;
      else stats.duplicates++;
      entry.anchor = instant;
      entry.lastFired = instant;
      entry.runAtDone = trigger.spec.runAt;
    } catch (error) {
      stats.errors++;
      log(`scheduler: creating the fire of ${id} at ${instant.toISOString()} failed (retrying in 1 s): ${(error as Error).message}`);
      entry.busy = false;
      if (mine === epoch) arm(id, entry, 1000);
      return;
    }
    entry.busy = false;
    if (mine !== epoch || entries.get(id) !== entry) return;
    // The following instant, computed once the create is out; the evaluation below arms for it
    // unless the trigger changed meanwhile (then it decides afresh).
    const following = trigger.spec.cron !== undefined ? nextCronInstant(trigger.spec.cron, trigger.spec.timezone, instant) : undefined;
    entry.next = following && following.getTime() > now().getTime() ? following : undefined;
    entry.cacheKey = cacheKeyOf(entry.anchor);
    void evaluate(id);
  }

  return {
    name: 'cron-scheduler',
    stats: () => ({ ...stats }),
    start(context) {
      ctx = context;
      epoch++;
      const mine = epoch;
      const informer = context.informer<Trigger>(TRIGGER);
      const onChange = (t: Trigger) => { if (mine === epoch) void evaluate(keyOf(t)); };
      informer.on('add', onChange);
      informer.on('update', onChange);
      informer.on('delete', (t) => { if (mine === epoch) clear(keyOf(t)); });
      for (const t of informer.list()) void evaluate(keyOf(t));
    },
    stop() {
      epoch++;
      for (const id of [...entries.keys()]) clear(id);
      ctx = undefined;
    },
  };
}
