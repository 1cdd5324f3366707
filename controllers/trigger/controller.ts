// The Trigger controller on the runtime's object reconciler: the only writer of Trigger status.
// It summarizes the trigger's fires (pure code in desired.ts) and runs again when the spec (a
// manifest change) or the annotations (`svc.dev/resume`) change, when one of its fires changes,
// or when a session it started changes; its own status writes do not wake it.
import { annotationsChanged, anyOf, generationChanged, objectController, type ControllerDefinition } from '../../src/runtime/index.js';
import {
  LABEL_TRIGGER, SESSION, TRIGGER, TRIGGER_FIRE,
  type KubeObject, type Session, type Trigger, type TriggerFire,
} from '../../src/resources/index.js';
import { nextTriggerStatus } from './status.js';

export interface TriggerControllerOptions {
  catchUpMs?: number;
  maxFailures?: number;
  now?: () => Date;
}

interface Observed { fires: TriggerFire[]; sessions: Map<string, Session> }

export function triggerController(options: TriggerControllerOptions = {}): ControllerDefinition {
  return objectController<Trigger, Observed>({
    name: 'trigger',
    for: TRIGGER,
    owns: [TRIGGER_FIRE],
    watches: [{
      type: SESSION,
      map: (obj: KubeObject) => {
        const trigger = obj.metadata.labels?.[LABEL_TRIGGER];
        return trigger ? [{ namespace: obj.metadata.namespace ?? '', name: trigger }] : [];
      },
    }],
    concurrency: 2,
    predicates: [anyOf(generationChanged, annotationsChanged)],
    now: options.now,
    async observe(trigger, ctx) {
      const fires = ctx.resource<TriggerFire>(TRIGGER_FIRE).ownedBy(trigger);
      const sessions = ctx.resource<Session>(SESSION).withLabel(LABEL_TRIGGER, trigger.metadata.name!, trigger.metadata.namespace);
      return { fires, sessions: new Map(sessions.map((s) => [s.metadata.name!, s])) };
    },
    compute(trigger, observed, now) {
      // the informer decodes what it stores (defaults applied): no second decode here
      const outcome = nextTriggerStatus({ trigger, ...observed, now, catchUpMs: options.catchUpMs, maxFailures: options.maxFailures });
      return { status: outcome.status, events: outcome.events, requeueAfter: outcome.requeueAfterMs };
    },
  });
}
