// The Trigger controller on the runtime's object reconciler: the only writer of Trigger status,
// and the one that deletes the trigger's old fires (retention, DESIGN §8.4) and, when
// SVC_SESSION_HISTORY asks for it, the old sessions it started (docs/sessions.md "Session
// history"). It summarizes the trigger's fires and prunes them (pure code in decide.ts and
// status.ts) and runs again when the spec (a manifest change) or the annotations
// (`svc.dev/resume`) change, when one of its fires or ledger pages changes, or when a session it
// started changes; its own status writes do not wake it. Every read is by index: its fires by
// owner, their sessions by name, the sessions it started and the change requests by label.
import { isAlreadyExists, isNotFound, RecentWrites } from '../../src/kube/index.js';
import { annotationsChanged, anyOf, generationChanged, objectController, type ControllerDefinition, type ReconcileContext } from '../../src/runtime/index.js';
import {
  CHANGE_REQUEST, DEFAULT_FIRE_HISTORY, DELIVERY_LEDGER, LABEL_PROJECT, LABEL_TRIGGER, PROJECT, SESSION, TRIGGER, TRIGGER_FIRE, controllerOf,
  type ChangeRequest, type ConfigMapObject, type KubeObject, type Project, type Session, type Trigger, type TriggerFire,
} from '../../src/resources/index.js';
import { decideTrigger, type LedgerWrite, type TriggerFacts, type TriggerStep } from './decide.js';

export interface TriggerControllerOptions {
  catchUpMs?: number;
  maxFailures?: number;
  /** Finished fires kept per trigger (default SVC_TRIGGER_FIRE_HISTORY, 100). */
  history?: number;
  /** Finished sessions kept per trigger (SVC_SESSION_HISTORY); 0, the default, keeps every one. */
  sessionHistory?: number;
  now?: () => Date;
}

export function triggerController(options: TriggerControllerOptions = {}): ControllerDefinition {
  const settings = { catchUpMs: options.catchUpMs, maxFailures: options.maxFailures, history: options.history ?? DEFAULT_FIRE_HISTORY, sessionHistory: options.sessionHistory ?? 0 };
  // Ledger pages this controller wrote, until the cache shows them: the next write fills the right page.
  const written = new RecentWrites<ConfigMapObject>();

  function ledgerOf(trigger: Trigger, ctx: ReconcileContext): ConfigMapObject[] {
    const pages = ctx.resource<ConfigMapObject>(DELIVERY_LEDGER);
    const namespace = trigger.metadata.namespace!;
    return written.overlaySelected(pages.ownedBy(trigger), namespace, (ns, name) => pages.get(ns, name), (page) => controllerOf(page)?.uid === trigger.metadata.uid);
  }

  /** Adds the entries to the page (creates it when new; one that went meanwhile is made again). */
  async function recordDeliveries(write: LedgerWrite, ctx: ReconcileContext): Promise<ConfigMapObject> {
    const pages = ctx.resource<ConfigMapObject>(DELIVERY_LEDGER);
    const { namespace, name } = write.page.metadata;
    const before = pages.get(namespace, name!)?.metadata.resourceVersion;
    const add = () => pages.mergePatch(namespace!, name!, { data: write.entries });
    let stored: ConfigMapObject;
    try {
      stored = write.create ? await pages.create({ ...write.page, data: write.entries }) : await add();
    } catch (error) {
      if (write.create && isAlreadyExists(error)) stored = await add();
      else if (!write.create && isNotFound(error)) stored = await pages.create({ ...write.page, data: write.entries });
      else throw error;
    }
    written.record(stored, before);
    return stored;
  }

  return objectController<Trigger, TriggerFacts, TriggerStep>({
    name: 'trigger',
    for: TRIGGER,
    owns: [TRIGGER_FIRE, DELIVERY_LEDGER],
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
      // the sessions of these fires; all it started only when sessions are pruned (SVC_SESSION_HISTORY)
      const namespace = trigger.metadata.namespace!;
      const cached = ctx.resource<Session>(SESSION);
      const sessions = new Map<string, Session>();
      for (const fire of fires) {
        const name = fire.status?.sessionName;
        const session = name ? cached.get(namespace, name) : undefined;
        if (session) sessions.set(name!, session);
      }
      const facts: TriggerFacts = { fires, sessions, ledger: ledgerOf(trigger, ctx) };
      if (settings.sessionHistory <= 0) return facts;
      const projects = ctx.resource<Project>(PROJECT);
      const changeRequests = ctx.resource<ChangeRequest>(CHANGE_REQUEST);
      // an open change request not yet in the cache must not let its session go
      if (!projects.informer.hasSynced() || !changeRequests.informer.hasSynced()) return facts;
      const projectName = trigger.spec.projectRef.name;
      const started = {
        sessions: cached.withLabel(LABEL_TRIGGER, trigger.metadata.name!, namespace),
        project: projects.get(namespace, projectName),
        changeRequests: changeRequests.withLabel(LABEL_PROJECT, projectName, namespace),
      };
      return { ...facts, started };
    },
    compute: (trigger, facts, now) => decideTrigger(trigger, facts, settings, now),
    async perform(_trigger, step, ctx, facts) {
      const stored = await Promise.all(step.writes.map((write) => recordDeliveries(write, ctx)));
      const names = new Set(stored.map((page) => page.metadata.name));
      return { observed: { ledger: [...facts.ledger.filter((page) => !names.has(page.metadata.name)), ...stored] } };
    },
  });
}
