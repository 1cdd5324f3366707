// The Trigger controller: the only writer of Trigger status. It summarizes the trigger's fires
// (pure code in desired.ts) and re-runs when a fire or a session the trigger started changes.
import type { ControllerDefinition } from '../../src/runtime/index.js';
import { updateStatus } from '../../src/runtime/status.js';
import { LABEL_TRIGGER, SESSION, TRIGGER, TRIGGER_FIRE, type KubeObject, type Session, type Trigger, type TriggerFire } from '../../src/resources/index.js';
import { nextTriggerStatus } from './desired.js';

export interface TriggerControllerOptions {
  catchUpMs?: number;
  maxFailures?: number;
  now?: () => Date;
  log?: (message: string) => void;
}

export function triggerController(options: TriggerControllerOptions = {}): ControllerDefinition {
  const now = options.now ?? (() => new Date());
  return {
    name: 'trigger',
    for: TRIGGER,
    owns: [TRIGGER_FIRE],
    concurrency: 2,
    watches: [{
      type: SESSION,
      map: (obj: KubeObject) => {
        const trigger = obj.metadata.labels?.[LABEL_TRIGGER];
        return trigger ? [{ namespace: obj.metadata.namespace ?? '', name: trigger }] : [];
      },
    }],
    async reconcile(key, ctx) {
      const cached = ctx.informer<Trigger>(TRIGGER).get(key.namespace, key.name);
      if (!cached || cached.metadata.deletionTimestamp) return;
      const triggers = ctx.client.resource<Trigger>(TRIGGER);
      const trigger = triggers.decode(cached);
      const fires = ctx.informer<TriggerFire>(TRIGGER_FIRE).list(key.namespace)
        .filter((f) => f.metadata.ownerReferences?.some((r) => r.controller && r.uid === trigger.metadata.uid));
      const sessions = new Map(ctx.informer<Session>(SESSION).list(key.namespace)
        .filter((s) => s.metadata.labels?.[LABEL_TRIGGER] === key.name)
        .map((s) => [s.metadata.name!, s]));
      const outcome = nextTriggerStatus({ trigger, fires, sessions, now: now(), catchUpMs: options.catchUpMs, maxFailures: options.maxFailures });
      await updateStatus(triggers, trigger, outcome.status);
      for (const event of outcome.events) {
        await ctx.client.recordEvent(trigger, event).catch((error: Error) => options.log?.(`trigger ${key.name}: recording an event failed: ${error.message}`));
      }
      return outcome.requeueAfterMs !== undefined ? { requeueAfter: outcome.requeueAfterMs } : undefined;
    },
  };
}
