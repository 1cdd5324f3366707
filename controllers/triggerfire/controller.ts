// The TriggerFire controller (on the runtime's object reconciler): the only writer of
// TriggerFire status. Each fire is its own key: observe (its trigger and project, the
// namespace's pending fires and the sessions that hold a slot, from the caches by index, the cap)
// -> decideFire (pure: admission, decide.ts) -> perform its step (create the Session, or
// re-prompt the trigger's last one) -> one status write. The queue is the pending fires
// themselves (durable, in the cluster): a Session that starts, stops or goes, a fire that leaves
// the queue, or a new cap wakes the pending fires of that namespace, and each decides again
// whether it is its turn. Several fires are decided at once: each counts the pending fires ahead
// of it and the sessions this process just created (RecentWrites), so the order and the cap hold.
import { isAlreadyExists, isInvalid, RecentWrites, retryOnConflict } from '../../src/kube/index.js';
import { generationChanged, objectController, type ControllerDefinition, type ObjectKey, type Predicate, type ReconcileContext } from '../../src/runtime/index.js';
import {
  LABEL_TRIGGER, NAMESPACE, PENDING_FIRES_INDEX, PROJECT, SESSION, SLOT_HOLDERS_INDEX, TRIGGER, TRIGGER_FIRE, appendPromptPatch, compareFires, defaultSessionCap,
  fireQueueDepth, holdsSlot, isPendingFire, pendingPrompts, promisedOwnSession, promisedSessionOf, sessionCap,
  type KubeObject, type Project, type Session, type Trigger, type TriggerFire,
} from '../../src/resources/index.js';
import { decideFire, type FireFacts, type FireStep } from './decide.js';

export interface TriggerFireControllerOptions {
  /** Cap when the Namespace has no svc.dev/max-concurrent-sessions annotation (default SVC_MAX_CONCURRENT_SESSIONS). */
  defaultCap?: number;
  /** Most queued fires per project (default SVC_TRIGGER_QUEUE_DEPTH, 100). */
  queueDepth?: number;
  /** Fires decided at once (default 32: a fire waits on the API server, not on this process). */
  workers?: number;
  now?: () => Date;
}

/** A Session update that takes or frees a slot of the cap. */
const slotChanged: Predicate = (obj, old) => holdsSlot(obj as Session) !== holdsSlot(old as Session);

const isWaiting = (fire: TriggerFire) => fire.status?.phase === 'queued';

/**
 * The fires of a namespace waiting at the cap, in queue order: each decides again whether it is
 * its turn. Fires not looked at yet are in the work queue already (their own add), so a burst of
 * new fires is not woken again by every fire before it (which cost the square of the burst).
 */
function queueOf(ctx: ReconcileContext, namespace: string): ObjectKey[] {
  return ctx.resource<TriggerFire>(TRIGGER_FIRE).indexed(PENDING_FIRES_INDEX, namespace).filter(isWaiting).sort(compareFires)
    .map((f) => ({ namespace, name: f.metadata.name! }));
}

/** The pending fires whose 202 named the session `fire` was promised (reuse fires following it, decide.ts). */
function followersOf(ctx: ReconcileContext, fire: TriggerFire): ObjectKey[] {
  if (!promisedOwnSession(fire)) return [];
  const namespace = fire.metadata.namespace ?? '';
  const session = fire.spec.sessionName;
  return ctx.resource<TriggerFire>(TRIGGER_FIRE).indexed(PENDING_FIRES_INDEX, namespace)
    .filter((f) => f.spec.sessionName !== session && promisedSessionOf(f) === session)
    .map((f) => ({ namespace, name: f.metadata.name! }));
}

/**
 * A fire whose `queued` status just reached the cache. It decides once more: a slot freed after
 * it decided to wait, but before its status was visible, woke the waiting fires without it.
 */
const becameWaiting: Predicate = (obj, old) => isWaiting(obj as TriggerFire) && !isWaiting(old as TriggerFire);

function uniqueByName(sessions: Session[]): Session[] {
  return [...new Map(sessions.map((s) => [s.metadata.name!, s])).values()];
}

export function triggerFireController(options: TriggerFireControllerOptions = {}): ControllerDefinition {
  const defaultCap = options.defaultCap ?? defaultSessionCap();
  const queueDepth = options.queueDepth ?? fireQueueDepth();
  // Sessions this controller created or woke, until the cache shows them: the next fire counts them against the cap.
  const written = new RecentWrites<Session>();

  async function observe(fire: TriggerFire, ctx: ReconcileContext): Promise<FireFacts> {
    const namespace = fire.metadata.namespace!;
    const trigger = ctx.resource<Trigger>(TRIGGER).get(namespace, fire.spec.triggerRef.name);
    const project = trigger ? ctx.resource<Project>(PROJECT).get(namespace, trigger.spec.projectRef.name) : undefined;
    const account = ctx.resource<KubeObject>(NAMESPACE).get(undefined, namespace);
    const sessions = ctx.resource<Session>(SESSION);
    const fires = ctx.resource<TriggerFire>(TRIGGER_FIRE);
    const cached = (ns: string, name: string) => sessions.get(ns, name);
    const own = sessions.get(namespace, fire.spec.sessionName);
    return {
      trigger,
      project,
      // what admission reads: the sessions that hold a slot, and a reuse trigger's own sessions
      sessions: uniqueByName([
        ...written.overlaySelected(sessions.indexed(SLOT_HOLDERS_INDEX, namespace), namespace, cached, holdsSlot),
        ...(trigger?.spec.sessionMode === 'reuse'
          ? written.overlaySelected(sessions.withLabel(LABEL_TRIGGER, trigger.metadata.name!, namespace), namespace, cached, (s) => s.metadata.labels?.[LABEL_TRIGGER] === trigger.metadata.name)
          : []),
      ]),
      ownSession: written.get(namespace, fire.spec.sessionName, own) ?? own,
      fires: fires.indexed(PENDING_FIRES_INDEX, namespace),
      cap: sessionCap(account?.metadata.annotations, defaultCap),
      queueDepth,
    };
  }

  async function perform(fire: TriggerFire, step: FireStep, ctx: ReconcileContext): Promise<{ observed: Partial<FireFacts> }> {
    const sessions = ctx.resource<Session>(SESSION);
    const namespace = fire.metadata.namespace!;
    switch (step.kind) {
      case 'create': {
        const name = step.session.metadata.name!;
        try {
          written.record(await sessions.create(step.session), undefined);
        } catch (error) {
          // AlreadyExists: an earlier attempt created it (its status write was lost): fired all the same.
          if (isInvalid(error)) return { observed: { rejected: { reason: 'SessionRejected', message: `the cluster refused session ${name}: ${(error as Error).message}` } } };
          if (!isAlreadyExists(error)) throw error;
        }
        return { observed: { started: { session: name, reprompted: false, woke: false } } };
      }
      case 'reprompt': {
        // Appended once (the prompt id names the fire), with the resourceVersion as precondition; a stopped session is woken.
        // A session whose waiting prompts are full (it cannot run) does not take this one: the fire fails saying so.
        const outcome = await retryOnConflict(async (): Promise<{ woke: boolean } | { full: string }> => {
          const current = await sessions.client.get(namespace, step.session);
          const already = pendingPrompts(current).some((p) => p.id === step.prompt.id);
          const patch = already ? { metadata: { resourceVersion: current.metadata.resourceVersion } } : appendPromptPatch(current, step.prompt);
          if ('refused' in patch) return { full: patch.refused };
          const wake = step.wake || current.spec.desiredState === 'stopped';
          if (already && !wake) return { woke: false };
          const stored = await sessions.mergePatch(namespace, step.session, wake ? { ...patch, spec: { desiredState: 'running' } } : patch);
          if (wake) written.record(stored, sessions.get(namespace, step.session)?.metadata.resourceVersion);
          return { woke: wake };
        }, { attempts: 5 });
        if ('full' in outcome) return { observed: { rejected: { reason: 'PromptQueueFull', message: `${outcome.full}: this fire's prompt was not queued` } } };
        return { observed: { started: { session: step.session, reprompted: true, woke: outcome.woke } } };
      }
      case 'tell-trigger': {
        const trigger = ctx.resource<Trigger>(TRIGGER).get(namespace, fire.spec.triggerRef.name);
        if (trigger) await ctx.client.recordEvent(trigger, { type: 'Warning', reason: step.reason, message: step.message }).catch((error: Error) => ctx.log.warn('recording an event on the trigger failed', { error: error.message }));
        return { observed: { toldTrigger: true } };
      }
    }
  }

  return objectController<TriggerFire, FireFacts, FireStep>({
    name: 'triggerfire',
    for: TRIGGER_FIRE,
    // Several at once: each counts the pending fires ahead of it and this process's new sessions (written).
    concurrency: options.workers ?? 32,
    // A fire's spec never changes; its own status writes do not wake it (adds and deletes always do).
    predicates: [generationChanged],
    watches: [
      // A session that starts, stops or goes frees or takes a slot (its status writes otherwise change nothing here).
      { type: SESSION, map: (obj, ctx) => queueOf(ctx, obj.metadata.namespace ?? ''), predicates: [slotChanged] },
      // The cap of the account changed.
      { type: NAMESPACE, map: (obj, ctx) => queueOf(ctx, obj.metadata.name ?? '') },
      // A fire left the queue (fired, failed, deleted): the ones behind it move up, and those of its
      // trigger that follow the session it was promised (a reuse burst, decide.ts) look again.
      { type: TRIGGER_FIRE, map: (obj, ctx) => (isPendingFire(obj as TriggerFire) && !obj.metadata.deletionTimestamp ? [] : [...queueOf(ctx, obj.metadata.namespace ?? ''), ...followersOf(ctx, obj as TriggerFire)]) },
      { type: TRIGGER_FIRE, map: (obj) => (isWaiting(obj as TriggerFire) ? [{ namespace: obj.metadata.namespace ?? '', name: obj.metadata.name! }] : []), predicates: [becameWaiting] },
    ],
    now: options.now,
    observe,
    compute: (fire, facts, now) => decideFire(fire, facts, now),
    perform,
  });
}
