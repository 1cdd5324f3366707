/**
 * The generic object reconciler (controller-runtime's reconcile + controllerutil, agent-sandbox's
 * "compute the status purely, write it through one gate"). A kind supplies:
 *   observe(object, ctx)            I/O: the facts (caches, git, HTTP), a typed record
 *   compute(object, observed, now)  pure: { status, events, requeueAfter, children, steps }
 *   perform(object, step, ctx)      I/O, optional: one side effect that is not an owned child
 *                                   (push a branch, create a Secret elsewhere, call a daemon);
 *                                   it returns the facts it changed
 * and the runtime does the rest, in this order: read the object from the cache (gone: done);
 * deletion (run the finalizer's clean-up, remove it; nothing else); add the finalizer; observe;
 * compute; while the outcome asks for steps: perform them, fold their facts into the
 * observation and compute again; apply the children (deletes, updates, creates); write the
 * status once, through /status, only when the gate says it changed; record the events; requeue.
 */
import type { CachedResource, EventInput } from '../kube/index.js';
import { isAlreadyExists, isConflict, isNotFound } from '../kube/index.js';
import { jsonEqual } from '../lib/json.js';
import { getCondition, setCondition, type Condition, type KubeObject, type ResourceType } from '../resources/index.js';
import type { ControllerDefinition, ObjectKey, ReconcileContext } from './controller.js';
import { isTerminal, type TerminalError } from './errors.js';
import { finalizerPatch, hasFinalizer, withoutFinalizer } from './finalizers.js';
import type { Predicate } from './predicates.js';
import { statusChanged, type WithStatus } from './status.js';

/** Owned objects to make exist as desired: what `planChildren` returns, for one kind. */
export interface ChildPlan<C extends KubeObject = KubeObject> {
  create: C[];
  /** The desired objects whose spec or labels differ from what exists. */
  update: C[];
  /** Existing objects no longer desired. */
  delete: C[];
}

export interface Outcome<S, A = never> {
  /**
   * The whole status, started from the object's (fields other writers own included): written as
   * it is, so a field left out is removed (src/runtime/status.ts). Written only when changed.
   */
  status: S;
  events?: EventInput[];
  /** Reconcile again after this many ms even if nothing changes (e.g. re-read a repository). */
  requeueAfter?: number;
  /** Children to apply before the status is written, per kind. */
  children?: { type: ResourceType; plan: ChildPlan }[];
  /**
   * Side effects for `perform`, data only (what to do, never how). The runtime performs them
   * before children and status, then computes again with the facts they returned: the final
   * compute (no steps) decides children, status and events.
   */
  steps?: A[];
}

/** What one performed step changed: facts for the next compute, and the object when the step wrote it. */
export interface StepResult<T, O> {
  observed?: Partial<O>;
  object?: T;
}

/** Computes after performed steps before the runtime gives up (a step that never settles is a bug). */
export const MAX_STEP_PASSES = 5;

type StatusOf<T extends WithStatus> = NonNullable<T['status']>;

export interface ObjectReconciler<T extends WithStatus, O, A = never> {
  name: string;
  for: ResourceType;
  owns?: ResourceType[];
  watches?: ControllerDefinition['watches'];
  sources?: ControllerDefinition['sources'];
  concurrency?: number;
  predicates?: Predicate[];
  /**
   * Only for clean-up an owner reference cannot do: outside the cluster, or in another namespace.
   * One or several, each removed once its own clean-up is done.
   */
  finalizer?: ObjectFinalizer<T> | readonly ObjectFinalizer<T>[];
  /** I/O. Throw to retry with backoff; throw TerminalError to stop retrying and say why in Ready. */
  observe(obj: T, ctx: ReconcileContext): Promise<O>;
  /** Pure: no I/O, no clock but `now`. */
  compute(obj: T, observed: O, now: Date): Outcome<StatusOf<T>, A>;
  /** Carries out one step of an outcome (`observed`: the facts it was decided from). Throw to retry with backoff; TerminalError as in observe. */
  perform?(obj: T, step: A, ctx: ReconcileContext, observed: O): Promise<StepResult<T, O>>;
  /** The outcome of a TerminalError (default: Ready=False with its reason, a Warning Event once). */
  terminal?(obj: T, error: TerminalError, now: Date): Outcome<StatusOf<T>>;
  now?: () => Date;
}

/**
 * A finalizer of a kind. `appliesTo` (default: every object) limits it to the objects that need
 * it. `finalize` throws to retry with backoff, or answers `{ requeueAfter }` when its clean-up
 * waits on something else (the finalizer stays; the object is looked at again then).
 */
export interface ObjectFinalizer<T> {
  name: string;
  appliesTo?(obj: T): boolean;
  finalize(obj: T, ctx: ReconcileContext): Promise<void | { requeueAfter: number }>;
}

/** Where an outcome goes: the cluster (kubeOutcomeWriter) or a test's memory. */
export interface OutcomeWriter<T extends WithStatus> {
  writeStatus(obj: T, status: StatusOf<T>): Promise<void>;
  recordEvent(obj: T, event: EventInput): Promise<void>;
  applyChildren(type: ResourceType, plan: ChildPlan): Promise<void>;
}

/** The labels and spec `desired` sets are what `existing` has (other fields are the server's or others'). */
function childMatches(existing: KubeObject, desired: KubeObject): boolean {
  const labels = desired.metadata.labels ?? {};
  return jsonEqual(existing.spec, desired.spec) && Object.entries(labels).every(([k, v]) => existing.metadata.labels?.[k] === v);
}

/** Makes `existing` (the children an owner has) match `desired` exactly, by name. */
export function planChildren<C extends KubeObject>(existing: readonly C[], desired: readonly C[]): ChildPlan<C> {
  const byName = new Map(existing.map((c) => [c.metadata.name!, c]));
  const wanted = new Set(desired.map((c) => c.metadata.name!));
  const plan: ChildPlan<C> = { create: [], update: [], delete: [] };
  for (const want of desired) {
    const have = byName.get(want.metadata.name!);
    if (!have) plan.create.push(want);
    else if (!childMatches(have, want)) plan.update.push(want);
  }
  for (const have of existing) if (!wanted.has(have.metadata.name!)) plan.delete.push(have);
  return plan;
}

export function planIsEmpty(plan: ChildPlan): boolean {
  return plan.create.length + plan.update.length + plan.delete.length === 0;
}

/**
 * Applies an outcome: children first (deletes, updates, creates), then the status through the
 * one gate (`statusChanged`: condition transition times alone do not count), then the events.
 */
export async function applyOutcome<T extends WithStatus>(obj: T, outcome: Outcome<StatusOf<T>, unknown>, writer: OutcomeWriter<T>): Promise<{ statusWritten: boolean }> {
  for (const child of outcome.children ?? []) if (!planIsEmpty(child.plan)) await writer.applyChildren(child.type, child.plan);
  const statusWritten = statusChanged(obj.status, outcome.status);
  if (statusWritten) await writer.writeStatus(obj, outcome.status);
  // independent writes: at once (each Event's key is serialized by the recorder)
  await Promise.all((outcome.events ?? []).map((event) => writer.recordEvent(obj, event)));
  return { statusWritten };
}

/**
 * Children over the cluster. Create: an object of that name left by an earlier owner of the
 * same name is taken over (labels, ownerReferences, spec). Update: merge-patch of labels and
 * spec, with the fields the desired spec dropped sent as null. Delete: this exact object (uid).
 */
export async function applyChildrenToCluster<C extends KubeObject>(children: CachedResource<C>, plan: ChildPlan<C>): Promise<void> {
  // deletes, then updates, then creates; the children of one step are written at once
  await Promise.all(plan.delete.map((child) => children.delete(child)));
  await Promise.all(plan.update.map(async (child) => {
    const { namespace, name } = child.metadata;
    const current = await children.client.get(namespace!, name!);
    const spec: Record<string, unknown> = { ...(child.spec as object) };
    for (const key of Object.keys((current.spec as object | undefined) ?? {})) if (!(key in spec)) spec[key] = null;
    await children.mergePatch(namespace!, name!, { metadata: { labels: child.metadata.labels }, spec });
  }));
  await Promise.all(plan.create.map(async (child) => {
    try {
      await children.create(child);
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
      const { namespace, name, labels, ownerReferences } = child.metadata;
      await children.mergePatch(namespace!, name!, { metadata: { labels, ownerReferences }, spec: child.spec });
    }
  }));
}

/**
 * Writes `status` over `obj`. A Conflict because only the object's metadata changed meanwhile
 * (an annotation: a daemon's state event, a prompt) writes it again on the new version: the
 * status is still the controller's alone, and the change's own reconcile follows at once. A
 * changed spec or status is a real conflict: it goes back to the queue.
 */
export async function writeStatusOverMetadataChanges<T extends WithStatus>(handle: CachedResource<T>, obj: T, status: StatusOf<T>): Promise<void> {
  try {
    await handle.replaceStatus({ ...obj, status });
  } catch (error) {
    if (!isConflict(error)) throw error;
    const current = await handle.client.get(obj.metadata.namespace ?? '', obj.metadata.name!);
    if (current.metadata.generation !== obj.metadata.generation || !jsonEqual(current.status ?? null, obj.status ?? null)) throw error;
    await handle.replaceStatus({ ...current, status });
  }
}

/** The writer a controller uses: status through the kind's handle, events and children through the client. */
export function kubeOutcomeWriter<T extends WithStatus>(ctx: ReconcileContext, handle: CachedResource<T>): OutcomeWriter<T> {
  return {
    writeStatus: (obj, status) => writeStatusOverMetadataChanges(handle, obj, status),
    recordEvent: (obj, event) => ctx.client.recordEvent(obj, event),
    applyChildren: (type, plan) => applyChildrenToCluster(ctx.resource(type), plan),
  };
}

/** Ready=False with the terminal error's reason; a Warning event when that is news. */
export function terminalOutcome<T extends WithStatus>(obj: T, error: TerminalError, now: Date): Outcome<StatusOf<T>> {
  const previous = (obj.status ?? {}) as { conditions?: Condition[] };
  const generation = obj.metadata.generation;
  const conditions = setCondition(previous.conditions, {
    type: 'Ready', status: 'False', reason: error.reason, message: error.message, ...(generation !== undefined ? { observedGeneration: generation } : {}),
  }, now);
  const before = getCondition(previous.conditions, 'Ready');
  const news = before?.reason !== error.reason || before?.message !== error.message || before?.status !== 'False';
  return {
    status: { ...previous, conditions } as StatusOf<T>,
    events: news ? [{ type: 'Warning', reason: error.reason, message: error.message }] : [],
  };
}

/**
 * Observe, compute, and while the outcome asks for steps: perform them and compute again. A
 * TerminalError (from observe or a step) becomes the kind's terminal outcome. Returns the
 * object as the last step left it (a step may write it) and the final outcome.
 */
export async function decide<T extends WithStatus, O, A>(
  kind: ObjectReconciler<T, O, A>, obj: T, ctx: ReconcileContext, now: () => Date,
): Promise<{ obj: T; outcome: Outcome<StatusOf<T>, A> }> {
  try {
    let observed = await kind.observe(obj, ctx);
    let outcome = kind.compute(obj, observed, now());
    for (let pass = 1; outcome.steps?.length; pass++) {
      if (!kind.perform) throw new Error(`${kind.name}: compute asked for steps but the kind cannot perform any`);
      if (pass > MAX_STEP_PASSES) throw new Error(`${kind.name}: steps did not settle after ${MAX_STEP_PASSES} passes: ${JSON.stringify(outcome.steps)}`);
      for (const step of outcome.steps) {
        if (ctx.signal.aborted) return { obj, outcome: { ...outcome, steps: [] } };
        const result = await kind.perform(obj, step, ctx, observed);
        if (result.object) obj = result.object;
        if (result.observed) observed = { ...observed, ...result.observed };
      }
      outcome = kind.compute(obj, observed, now());
    }
    return { obj, outcome };
  } catch (error) {
    if (!isTerminal(error)) throw error;
    ctx.log.warn('terminal error, not retrying', { reason: error.reason, error: error.message });
    return { obj, outcome: (kind.terminal ?? terminalOutcome)(obj, error, now()) };
  }
}

/**
 * One reconcile of `obj` as read (no deletion handling): decide, then apply the outcome through
 * `writer`. What objectController runs for every key, and what a test runs over memory.
 */
export async function reconcileObject<T extends WithStatus, O, A>(
  kind: ObjectReconciler<T, O, A>, obj: T, ctx: ReconcileContext, writer: OutcomeWriter<T>,
): Promise<{ outcome: Outcome<StatusOf<T>, A>; statusWritten: boolean }> {
  const decided = await decide(kind, obj, ctx, kind.now ?? (() => new Date()));
  if (ctx.signal.aborted) return { outcome: decided.outcome, statusWritten: false }; // lost the Lease or stopping: the next leader reconciles
  const { statusWritten } = await applyOutcome(decided.obj, decided.outcome, writer);
  return { outcome: decided.outcome, statusWritten };
}

/** A ControllerDefinition that runs `kind` through the generic steps above. */
export function objectController<T extends WithStatus, O, A = never>(kind: ObjectReconciler<T, O, A>): ControllerDefinition {
  return {
    name: kind.name,
    for: kind.for,
    owns: kind.owns,
    watches: kind.watches,
    sources: kind.sources,
    concurrency: kind.concurrency,
    predicates: kind.predicates,
    async reconcile(key: ObjectKey, ctx: ReconcileContext) {
      const handle = ctx.resource<T>(kind.for);
      let obj = handle.get(key.namespace, key.name);
      if (!obj) return;
      const finalizers: readonly ObjectFinalizer<T>[] = kind.finalizer === undefined ? [] : Array.isArray(kind.finalizer) ? kind.finalizer : [kind.finalizer as ObjectFinalizer<T>];
      if (obj.metadata.deletionTimestamp) {
        // whoever added it: a finalizer of this kind on the object is always honoured and removed
        for (const finalizer of finalizers) {
          if (!hasFinalizer(obj, finalizer.name)) continue;
          const pending = await finalizer.finalize(obj, ctx);
          if (pending) return { requeueAfter: pending.requeueAfter };
          try {
            obj = await handle.mergePatch(key.namespace, key.name, finalizerPatch(obj, withoutFinalizer(obj, finalizer.name)));
          } catch (error) {
            // A reconcile queued before the cache saw an earlier one let the object go: it is gone, nothing is left to do.
            if (isNotFound(error)) return;
            throw error;
          }
          ctx.log.info('finalized', { finalizer: finalizer.name });
        }
        return;
      }
      const current = obj;
      const missing = finalizers.filter((f) => (f.appliesTo?.(current) ?? true) && !hasFinalizer(current, f.name)).map((f) => f.name);
      if (missing.length) obj = await handle.mergePatch(key.namespace, key.name, finalizerPatch(current, [...new Set([...(current.metadata.finalizers ?? []), ...missing])]));
      const { outcome } = await reconcileObject(kind, obj, ctx, kubeOutcomeWriter(ctx, handle));
      return outcome.requeueAfter ? { requeueAfter: outcome.requeueAfter } : undefined;
    },
  };
}
