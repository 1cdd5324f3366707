// The fire service shared by the webhook receiver and the manual fire route: find the trigger,
// answer the fire (session admission, src/sessions/admission.ts: fired, queued, or 429 beyond
// the queue depth) and record it as a TriggerFire carrying that answer. The TriggerFire
// controller keeps the answer (the same admission decides when a queued fire starts); a
// redelivery gets the first answer whatever happened since, also once the fire was pruned (the
// delivery ledger). Every read is by key or by index (store.ts): a delivery costs the same
// whatever the history of the namespace.
import { randomBytes, randomUUID } from 'node:crypto';
import {
  FIRE_ANSWER_ANNOTATION, childName, compareFires, deliveryFireName, fireAnswer, fireQueueDepth, isPendingFire, newTriggerFire, projectSecretsName,
  type FireAnswer, type FireSource, type Project, type Session, type Trigger, type TriggerFire,
} from '../../resources/index.js';
import { RecentWrites } from '../../kube/index.js';
import { KeyedMutex } from '../../lib/keyed-mutex.js';
import { admit } from '../../sessions/index.js';
import { authenticateWebhook, manualVariables, webhookVariables } from '../../triggers/index.js';
import { ApiError, notFound } from '../errors.js';
import type { TriggerStore } from './store.js';

export type { FireAnswer } from '../../resources/index.js';

export interface TriggerServiceOptions {
  store: TriggerStore;
  /** Most fires of one project waiting at the cap (default SVC_TRIGGER_QUEUE_DEPTH, 100). */
  queueDepth?: number;
  now?: () => Date;
}

export interface WebhookRequest {
  headers: Record<string, string | string[] | undefined>;
  rawBody: Buffer;
}

/** The trigger a webhook delivery is for, and what authenticates it. */
export interface WebhookTarget {
  project: Project;
  trigger: Trigger;
  secret: string;
  /** enabled: false in the manifest: only a redelivery of a delivery it accepted is answered (202), anything else 404. */
  disabled: boolean;
}

const DELIVERY_HEADERS = ['x-github-delivery', 'x-svc-delivery'] as const;
/** How long a fire this process created counts before its cache shows it. */
const RECENT_MS = 10_000;
/** How long after its fire a reuse trigger's new session is read live when the cache lacks it. */
const JUST_STARTED_MS = 60_000;

export class TriggerService {
  private readonly store: TriggerStore;
  private readonly queueDepth: number;
  private readonly now: () => Date;
  /** Fires this process created a moment ago, until its cache has them (answers must count them). */
  private readonly recent = new RecentWrites<TriggerFire>(RECENT_MS);
  private readonly reuseAnswers = new KeyedMutex();

  constructor(options: TriggerServiceOptions) {
    this.store = options.store;
    this.queueDepth = options.queueDepth ?? fireQueueDepth();
    this.now = options.now ?? (() => new Date());
  }

  /** The project or 404 (REST routes). */
  async requireProject(namespace: string, projectId: string): Promise<Project> {
    const project = await this.store.findProject(namespace, projectId);
    if (!project) throw notFound(`project ${projectId} not found`);
    return project;
  }

  triggers(project: Project): Trigger[] {
    return this.store.triggers(project).sort((a, b) => a.spec.slug.localeCompare(b.spec.slug));
  }

  trigger(project: Project, slug: string): Trigger | undefined {
    return this.store.triggers(project).find((t) => t.spec.slug === slug && !t.metadata.deletionTimestamp);
  }

  requireTrigger(project: Project, slug: string): Trigger {
    const trigger = this.trigger(project, slug);
    if (!trigger) throw notFound(`project ${project.metadata.name} has no trigger ${slug} (the default branch's manifest declares the triggers)`);
    return trigger;
  }

  /** Fires of a trigger, newest first. */
  fires(trigger: Trigger, limit: number): TriggerFire[] {
    return this.store.firesOf(trigger).sort((a, b) => compareFires(b, a)).slice(0, limit);
  }

  /**
   * The webhook trigger a delivery is for, in the SPEC's order: 404 (project, trigger, disabled,
   * not a webhook), then 409 (its secret not configured). Returns the secret for authentication.
   * A paused trigger is refused later (fireWebhook), after a redelivery got its first answer. So
   * is a disabled one (`disabled`): every delivery it gets is answered 404 as before, except an
   * authenticated redelivery of one it accepted while enabled, which gets its first answer.
   */
  async webhookTarget(namespace: string, projectId: string, slug: string): Promise<WebhookTarget> {
    const project = await this.store.findProject(namespace, projectId);
    if (!project) throw notFound('not found');
    const trigger = this.trigger(project, slug);
    if (!trigger || trigger.spec.type !== 'webhook') throw notFound('not found');
    const disabled = !trigger.spec.enabled;
    const secret = await this.webhookSecret(project, trigger);
    if (!secret) throw disabled ? notFound('not found') : new ApiError(409, `the project secret ${trigger.spec.secretEnv} named by secret_env is not configured`);
    return { project, trigger, secret, disabled };
  }

  /** The value of the project secret a webhook trigger's secret_env names; undefined (or empty) while it is not set. */
  private webhookSecret(project: Project, trigger: Trigger): Promise<string | undefined> {
    return this.store.secretValue(project.metadata.namespace!, projectSecretsName(project), trigger.spec.secretEnv ?? '');
  }

  /** The names of the project's secrets that are set, read now (one read for a whole listing). */
  setSecrets(project: Project): Promise<Set<string>> {
    return this.store.setSecretKeys(project.metadata.namespace!, projectSecretsName(project));
  }

  /** 401 (no detail) unless the raw body is signed with, or the request carries, the secret (a disabled trigger: 404, as for any delivery). */
  authenticate(request: WebhookRequest, target: Pick<WebhookTarget, 'secret' | 'disabled'>): void {
    if (!authenticateWebhook(request.headers, request.rawBody, target.secret).ok) throw target.disabled ? notFound('not found') : new ApiError(401, 'unauthorized');
  }

  async fireWebhook(trigger: Trigger, request: WebhookRequest): Promise<FireAnswer> {
    const firedAt = this.now();
    const delivery = DELIVERY_HEADERS.map((h) => request.headers[h]).find((v) => typeof v === 'string' && v.trim() !== '') as string | undefined;
    return this.fire(trigger, 'webhook', firedAt, webhookVariables(trigger.spec, { rawBody: request.rawBody, headers: request.headers, firedAt }), delivery?.trim());
  }

  async fireManually(trigger: Trigger, actor: string, message: { text: string; source?: string } | undefined): Promise<FireAnswer> {
    if (!trigger.spec.enabled) throw new ApiError(409, `trigger ${trigger.spec.slug} is disabled (enabled: false in the manifest); enable it on the default branch to fire it`);
    const firedAt = this.now();
    return this.fire(trigger, 'manual', firedAt, manualVariables(trigger.spec, { actor, message, firedAt }));
  }

  async resume(trigger: Trigger): Promise<Trigger> {
    return this.store.resume(trigger, this.now().toISOString());
  }

  /**
   * The answer a delivery already got, by its fire's name: the fire in the cache, else one this
   * process created a moment ago, else the delivery ledger (the fire was pruned).
   */
  private knownAnswer(namespace: string, name: string): FireAnswer | undefined {
    const cached = this.store.fire(namespace, name);
    const fire = cached ?? this.recent.get(namespace, name, cached);
    return fire ? fireAnswer(fire) : this.store.prunedAnswer(namespace, name);
  }

  /** The answer to a new fire (admission); ApiError 404 for a disabled or paused webhook trigger, 429 beyond the queue depth. */
  private async answerFor(trigger: Trigger, source: FireSource, fire: TriggerFire): Promise<FireAnswer> {
    if (source === 'webhook' && !trigger.spec.enabled) throw notFound('not found');
    if (source === 'webhook' && trigger.status?.paused) {
      const slug = trigger.spec.slug;
      throw notFound(`trigger ${slug} is paused after failed fires; resume it with \`svc triggers resume ${slug}\``);
    }
    const namespace = trigger.metadata.namespace!;
    const cap = await this.store.cap(namespace);
    const admission = admit({
      cap, queueDepth: this.queueDepth, sessions: await this.admissionSessions(trigger), fires: this.pendingFires(namespace),
      request: { kind: 'fire', fire, sessionMode: trigger.spec.sessionMode, promised: false },
    });
    switch (admission.kind) {
      case 'start': return { status: 'fired', session_id: fire.spec.sessionName };
      case 'reprompt': return { status: 'fired', session_id: admission.session.metadata.name! };
      case 'follow': return { status: 'fired', session_id: admission.session };
      case 'queue': return { status: 'queued', reason: admission.reason };
      case 'full':
        void this.store.recordEvent(trigger, { type: 'Warning', reason: 'QueueFull', message: `a fire was refused: ${admission.reason}` }).catch(() => {});
        throw new ApiError(429, admission.reason);
    }
  }

  /** The queue: the pending fires of the namespace, with the ones this process created that its cache lacks. */
  private pendingFires(namespace: string): TriggerFire[] {
    return this.recent.overlaySelected(this.store.pendingFires(namespace), namespace, (ns, name) => this.store.fire(ns, name), isPendingFire);
  }

  /** What admission reads of the sessions: those holding a slot and, for a reuse trigger, its own. */
  private async admissionSessions(trigger: Trigger): Promise<Session[]> {
    const namespace = trigger.metadata.namespace!;
    const holders = this.store.slotHolders(namespace);
    if (trigger.spec.sessionMode !== 'reuse') return holders;
    const own = this.store.sessionsOf(trigger);
    const late = await Promise.all(this.startedNotCached(trigger, [...holders, ...own]).map((name) => this.store.readSession(namespace, name).catch(() => undefined)));
    return [...new Map([...holders, ...own, ...late.filter((s): s is Session => s !== undefined)].map((s) => [s.metadata.name!, s])).values()];
  }

  /**
   * Sessions the trigger's fires started a moment ago that this cache does not show yet: the
   * operator created the session and recorded its fire `fired`, and the fire's update came
   * through its watch before the session came through another. A reuse delivery then saw neither
   * a pending fire to follow nor a session to re-prompt, and started a second session.
   */
  private startedNotCached(trigger: Trigger, known: readonly Session[]): string[] {
    const names = new Set(known.map((s) => s.metadata.name));
    const since = this.now().getTime() - JUST_STARTED_MS;
    return this.store.firesOf(trigger)
      // its own new session (a re-prompting fire names the session it re-prompted)
      .filter((f) => f.status?.phase === 'fired' && f.status.sessionName === f.spec.sessionName && Date.parse(f.spec.firedAt) >= since)
      .map((f) => f.spec.sessionName)
      .filter((name) => !names.has(name));
  }

  private async fire(trigger: Trigger, source: FireSource, firedAt: Date, variables: Record<string, unknown>, deliveryId?: string): Promise<FireAnswer> {
    if (trigger.spec.sessionMode !== 'reuse') return this.answerAndRecord(trigger, source, firedAt, variables, deliveryId);
    // One at a time per reuse trigger: each answer sees the fires answered before it, so a burst follows one new session.
    return this.reuseAnswers.run(`${trigger.metadata.namespace}/${trigger.metadata.name}`, () => this.answerAndRecord(trigger, source, firedAt, variables, deliveryId));
  }

  private async answerAndRecord(trigger: Trigger, source: FireSource, firedAt: Date, variables: Record<string, unknown>, deliveryId?: string): Promise<FireAnswer> {
    const namespace = trigger.metadata.namespace!;
    const name = deliveryId
      ? deliveryFireName(trigger.metadata.name!, deliveryId)
      : childName(trigger.metadata.name!, `${source === 'manual' ? 'm' : 'w'}-${firedAt.getTime()}-${randomBytes(3).toString('hex')}`);
    // A redelivery gets the answer the first delivery got, whatever happened since (queue full, trigger paused, fire pruned).
    const known = deliveryId ? this.knownAnswer(namespace, name) : undefined;
    if (known) return known;
    const draft = newTriggerFire(trigger, { name, source, firedAt, variables, sessionName: randomUUID(), ...(deliveryId ? { deliveryId } : {}) });
    let answer: FireAnswer;
    try {
      answer = await this.answerFor(trigger, source, draft);
    } catch (error) {
      // Refused: unless the cache was behind a first delivery that was accepted (read it live).
      const first = deliveryId && error instanceof ApiError ? await this.store.readFire(namespace, name).catch(() => undefined) : undefined;
      if (first) return fireAnswer(first);
      throw error;
    }
    const fire = { ...draft, metadata: { ...draft.metadata, annotations: { ...draft.metadata.annotations, [FIRE_ANSWER_ANNOTATION]: JSON.stringify(answer) } } };
    let result;
    try {
      result = await this.store.createFire(fire);
    } catch (error) {
      // Logged by the error handler with its cause; the client only learns it failed.
      throw new ApiError(500, 'the fire could not be recorded; try again', undefined, undefined, { cause: error });
    }
    // A redelivery racing on this or another replica gets the answer the first delivery got.
    if ('existing' in result) return fireAnswer(result.existing);
    if (!this.store.fire(namespace, name)) this.recent.record(result.created, undefined);
    return answer;
  }
}
