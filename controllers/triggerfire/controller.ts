// The TriggerFire controller: the only writer of TriggerFire status. For each pending fire it
// renders the prompt and creates the Session (or re-prompts the trigger's last session), or
// queues the fire at the account's concurrent-session cap. The queue is the pending fires
// themselves (durable, in the cluster); a Session change in a namespace drains its queue in order.
import { isAlreadyExists, isConflict, isInvalid, type KubeClient } from '../../src/kube/index.js';
import type { ControllerDefinition, ObjectKey, ReconcileContext } from '../../src/runtime/index.js';
import { updateStatus } from '../../src/runtime/status.js';
import {
  NAMESPACE, PROJECT, SESSION, TRIGGER, TRIGGER_FIRE, appendPromptPatch, compareFires, defaultSessionCap, fireQueueDepth,
  isPendingFire, pendingPrompts, sessionCap,
  type KubeObject, type Project, type Session, type Trigger, type TriggerFire,
} from '../../src/resources/index.js';
import { decideFire, fireStatus, type FireAction } from './desired.js';

export interface TriggerFireControllerOptions {
  /** Cap when the Namespace has no svc.dev/max-concurrent-sessions annotation (default SVC_MAX_CONCURRENT_SESSIONS). */
  defaultCap?: number;
  /** Most queued fires per project (default SVC_TRIGGER_QUEUE_DEPTH, 100). */
  queueDepth?: number;
  now?: () => Date;
  log?: (message: string) => void;
}

/** Key that drains a namespace's queue (no object has an empty name). */
const drainKey = (namespace: string): ObjectKey => ({ namespace, name: '' });

export function triggerFireController(options: TriggerFireControllerOptions = {}): ControllerDefinition {
  const defaultCap = options.defaultCap ?? defaultSessionCap();
  const queueDepth = options.queueDepth ?? fireQueueDepth();
  const now = options.now ?? (() => new Date());

  async function capOf(client: KubeClient, namespace: string): Promise<number> {
    const ns = await client.resource(NAMESPACE).find('', namespace);
    return sessionCap(ns?.metadata.annotations, defaultCap);
  }

  /** Reconciles one fire; `updated` holds fires this pass already changed (the cache may lag). */
  async function reconcileFire(ctx: ReconcileContext, cached: TriggerFire, updated: Map<string, TriggerFire>): Promise<void> {
    const { client } = ctx;
    const fires = ctx.informer<TriggerFire>(TRIGGER_FIRE);
    const fire = client.resource<TriggerFire>(TRIGGER_FIRE).decode(cached);
    const namespace = fire.metadata.namespace!;
    const trigger = ctx.informer<Trigger>(TRIGGER).get(namespace, fire.spec.triggerRef.name);
    const project = trigger ? ctx.informer<Project>(PROJECT).get(namespace, trigger.spec.projectRef.name) : undefined;
    // Sessions are read live: one just created by the previous fire must count against the cap.
    const sessions = (await client.resource<Session>(SESSION).list(namespace)).items;
    const action = decideFire({
      fire,
      trigger: trigger && client.resource<Trigger>(TRIGGER).decode(trigger),
      project: project && client.resource<Project>(PROJECT).decode(project),
      sessions,
      fires: fires.list(namespace).map((f) => updated.get(f.metadata.name!) ?? f),
      cap: await capOf(client, namespace),
      queueDepth,
      now: now(),
    });
    const stored = await apply(client, fire, trigger, action);
    if (stored) updated.set(stored.metadata.name!, stored);
  }

  /** Carries out `action`; returns the fire as stored after its status write. */
  async function apply(client: KubeClient, fire: TriggerFire, trigger: Trigger | undefined, action: FireAction): Promise<TriggerFire | undefined> {
    const fireClient = client.resource<TriggerFire>(TRIGGER_FIRE);
    const at = now();
    switch (action.kind) {
      case 'none':
        return undefined;
      case 'create': {
        const session = await createSession(client, action.session);
        if (!session) {
          const stored = await updateStatus(fireClient, fire, fireStatus(fire, { phase: 'failed', reason: 'SessionRejected', message: `the cluster refused session ${action.session.metadata.name}` }, at));
          await event(client, fire, trigger, 'Warning', 'SessionRejected', `the cluster refused session ${action.session.metadata.name}`);
          return stored;
        }
        const stored = await updateStatus(fireClient, fire, fireStatus(fire, { phase: 'fired', sessionName: session.metadata.name!, reprompted: false }, at));
        if (fire.status?.phase !== 'fired') await event(client, fire, undefined, 'Normal', 'Fired', `created session ${session.metadata.name}`);
        return stored;
      }
      case 'reprompt': {
        await reprompt(client, action.session, action.prompt, action.wake);
        const stored = await updateStatus(fireClient, fire, fireStatus(fire, { phase: 'fired', sessionName: action.session.metadata.name!, reprompted: true }, at));
        await event(client, fire, undefined, 'Normal', 'Fired', `re-prompted session ${action.session.metadata.name}${action.wake ? ' and woke it' : ''}`);
        return stored;
      }
      case 'queue': {
        const first = fire.status?.phase !== 'queued';
        const stored = await updateStatus(fireClient, fire, fireStatus(fire, { phase: 'queued', position: action.position, message: action.message }, at));
        if (first) await event(client, fire, undefined, 'Normal', 'Queued', action.message);
        return stored;
      }
      case 'fail': {
        const stored = await updateStatus(fireClient, fire, fireStatus(fire, { phase: 'failed', reason: action.reason, message: action.message }, at));
        await event(client, fire, trigger, 'Warning', action.reason, action.message);
        return stored;
      }
    }
  }

  /** Creates the Session; an earlier attempt's Session counts as created. Undefined when the cluster refuses it. */
  async function createSession(client: KubeClient, session: Session): Promise<Session | undefined> {
    if (session.metadata.uid) return session; // it exists already
    const sessions = client.resource<Session>(SESSION);
    try {
      return await sessions.create(session);
    } catch (error) {
      if (isAlreadyExists(error)) return sessions.get(session.metadata.namespace!, session.metadata.name!);
      if (isInvalid(error)) return undefined;
      throw error;
    }
  }

  /** Appends the prompt (once) with the resourceVersion as precondition, and wakes a stopped session. */
  async function reprompt(client: KubeClient, target: Session, prompt: ReturnType<typeof pendingPrompts>[number], wake: boolean): Promise<void> {
    const sessions = client.resource<Session>(SESSION);
    for (let attempt = 0; ; attempt++) {
      const current = await sessions.get(target.metadata.namespace!, target.metadata.name!);
      const already = pendingPrompts(current).some((p) => p.id === prompt.id);
      const needsWake = wake || current.spec.desiredState === 'stopped';
      if (already && !needsWake) return;
      const patch = already ? { metadata: { resourceVersion: current.metadata.resourceVersion } } : appendPromptPatch(current, prompt);
      try {
        await sessions.mergePatch(current.metadata.namespace!, current.metadata.name!, needsWake ? { ...patch, spec: { desiredState: 'running' } } : patch);
        return;
      } catch (error) {
        if (!isConflict(error) || attempt >= 4) throw error;
      }
    }
  }

  async function event(client: KubeClient, fire: TriggerFire, trigger: Trigger | undefined, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
    try {
      await client.recordEvent(fire, { type, reason, message });
      if (trigger) await client.recordEvent(trigger, { type, reason, message: `fire ${fire.metadata.name}: ${message}` });
    } catch (error) {
      options.log?.(`triggerfire: recording an event failed: ${(error as Error).message}`);
    }
  }

  return {
    name: 'triggerfire',
    for: TRIGGER_FIRE,
    // One at a time: the cap and the queue order are decided from what the previous fire did.
    concurrency: 1,
    watches: [
      // A session that starts, stops or goes frees or takes a slot: drain that namespace's queue.
      { type: SESSION, map: (obj: KubeObject) => [drainKey(obj.metadata.namespace ?? '')] },
      { type: NAMESPACE, map: (obj: KubeObject) => [drainKey(obj.metadata.name ?? '')] },
    ],
    async reconcile(key, ctx) {
      const fires = ctx.informer<TriggerFire>(TRIGGER_FIRE);
      const updated = new Map<string, TriggerFire>();
      if (key.name) {
        const fire = fires.get(key.namespace, key.name);
        if (fire) await reconcileFire(ctx, fire, updated);
        return;
      }
      const pending = fires.list(key.namespace).filter(isPendingFire).sort(compareFires);
      for (const fire of pending) await reconcileFire(ctx, fire, updated);
      // A safety net for a missed event: look at a non-empty queue again later.
      return pending.length ? { requeueAfter: 30_000 } : undefined;
    },
  };
}
