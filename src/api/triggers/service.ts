// The fire service shared by the webhook receiver and the manual fire route: find the trigger,
// decide the 202 answer (fired or queued at the cap), and record the fire as a TriggerFire.
// The TriggerFire controller does the rest; a fire's outcome is a Session.
import { randomBytes, randomUUID } from 'node:crypto';
import {
  FIRE_ANSWER_ANNOTATION, LABEL_PROJECT, LABEL_TRIGGER, activeSessionCount, childName, compareFires, deliveryFireName, fireQueueDepth,
  holdsSlot, isPendingFire, newTriggerFire,
  type FireSource, type Project, type Session, type Trigger, type TriggerFire,
} from '../../resources/index.js';
import { authenticateWebhook, manualVariables, webhookVariables } from '../../triggers/index.js';
import { ApiError, notFound } from '../errors.js';
import type { TriggerStore } from './store.js';

/** The 202 body of a webhook or manual fire (SPEC §4.2). */
export type FireAnswer = { status: 'fired'; session_id: string } | { status: 'queued'; reason: string };

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

const DELIVERY_HEADERS = ['x-github-delivery', 'x-svc-delivery'] as const;

/** The trigger's most recent live session (reuse mode), like the TriggerFire controller picks it. */
function lastLiveSession(trigger: Trigger, sessions: readonly Session[]): Session | undefined {
  return sessions
    .filter((s) => s.metadata.labels?.[LABEL_TRIGGER] === trigger.metadata.name && !s.metadata.deletionTimestamp && s.status?.status !== 'failed')
    .sort((a, b) => (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? ''))[0];
}

function readAnswer(fire: TriggerFire): FireAnswer {
  try {
    const parsed = JSON.parse(fire.metadata.annotations?.[FIRE_ANSWER_ANNOTATION] ?? '') as FireAnswer;
    if (parsed.status === 'fired' || parsed.status === 'queued') return parsed;
  } catch { /* fall through: a fire written by someone else */ }
  return fire.status?.phase === 'queued' ? { status: 'queued', reason: fire.status.reason ?? 'queued' } : { status: 'fired', session_id: fire.status?.sessionName ?? fire.spec.sessionName };
}

export class TriggerService {
  private readonly store: TriggerStore;
  private readonly queueDepth: number;
  private readonly now: () => Date;
  /** Fires this process created a moment ago, until its cache has them (answers must count them). */
  private readonly recent = new Map<string, { fire: TriggerFire; until: number }>();

  constructor(options: TriggerServiceOptions) {
    this.store = options.store;
    this.queueDepth = options.queueDepth ?? fireQueueDepth();
    this.now = options.now ?? (() => new Date());
  }

  /** The project, if it exists and is not being deleted. */
  project(namespace: string, projectId: string): Project | undefined {
    const project = this.store.project(namespace, projectId);
    return project && !project.metadata.deletionTimestamp ? project : undefined;
  }

  /** The project or 404 (REST routes). */
  requireProject(namespace: string, projectId: string): Project {
    const project = this.project(namespace, projectId);
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
    return this.store.fires(trigger.metadata.namespace!)
      .filter((f) => f.metadata.labels?.[LABEL_TRIGGER] === trigger.metadata.name)
      .sort((a, b) => compareFires(b, a))
      .slice(0, limit);
  }

  /**
   * The webhook trigger a delivery is for, in the SPEC's order: 404 (project, trigger, disabled,
   * not a webhook), then 409 (its secret not configured). Returns the secret for authentication.
   */
  async webhookTarget(namespace: string, projectId: string, slug: string): Promise<{ project: Project; trigger: Trigger; secret: string }> {
    const project = this.project(namespace, projectId);
    if (!project) throw notFound('not found');
    const trigger = this.trigger(project, slug);
    if (!trigger || trigger.spec.type !== 'webhook' || !trigger.spec.enabled) throw notFound('not found');
    if (trigger.status?.paused) throw notFound(`trigger ${slug} is paused after failed fires; resume it with \`svc triggers resume ${slug}\``);
    const secretsName = project.spec.secretsSecretRef?.name ?? `${project.metadata.name}-secrets`;
    const secret = await this.store.secretValue(namespace, secretsName, trigger.spec.secretEnv ?? '');
    if (!secret) throw new ApiError(409, `the project secret ${trigger.spec.secretEnv} named by secret_env is not configured`);
    return { project, trigger, secret };
  }

  /** 401 (no detail) unless the raw body is signed with, or the request carries, the secret. */
  authenticate(request: WebhookRequest, secret: string): void {
    if (!authenticateWebhook(request.headers, request.rawBody, secret).ok) throw new ApiError(401, 'unauthorized');
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

  /** The answer for a new fire: queued at the cap (or behind queued fires), else fired. 429 beyond the queue depth. */
  private async answerFor(trigger: Trigger, sessionName: string): Promise<FireAnswer> {
    const namespace = trigger.metadata.namespace!;
    const sessions = this.store.sessions(namespace);
    if (trigger.spec.sessionMode === 'reuse') {
      const target = lastLiveSession(trigger, sessions);
      if (target && holdsSlot(target)) return { status: 'fired', session_id: target.metadata.name! };
    }
    const cap = await this.store.cap(namespace);
    const pending = this.firesWithRecent(namespace).filter(isPendingFire);
    const waiting = pending.filter((f) => f.status?.phase === 'queued');
    // Fires not yet handled by the controller will each take a slot (unless their session exists already).
    const sessionNames = new Set(sessions.map((s) => s.metadata.name));
    const starting = pending.filter((f) => f.status?.phase === undefined && !sessionNames.has(f.spec.sessionName)).length;
    if (activeSessionCount(sessions) + starting < cap && waiting.length === 0) {
      const target = trigger.spec.sessionMode === 'reuse' ? lastLiveSession(trigger, sessions) : undefined;
      return { status: 'fired', session_id: target?.metadata.name ?? sessionName };
    }
    const project = trigger.spec.projectRef.name;
    const projectQueued = waiting.filter((f) => f.metadata.labels?.[LABEL_PROJECT] === project).length;
    if (projectQueued >= this.queueDepth) {
      const reason = `the queue of project ${project} is full (${this.queueDepth} fires wait for the concurrent-session cap of ${cap})`;
      void this.store.recordEvent(trigger, { type: 'Warning', reason: 'QueueFull', message: `a fire was refused: ${reason}` }).catch(() => {});
      throw new ApiError(429, reason);
    }
    return { status: 'queued', reason: `the account's concurrent-session cap (${cap}) is reached; the fire is queued at position ${waiting.length + starting + 1 - Math.max(0, cap - activeSessionCount(sessions))} and starts when a session stops` };
  }

  private firesWithRecent(namespace: string): TriggerFire[] {
    const cached = this.store.fires(namespace);
    const now = Date.now();
    const names = new Set(cached.map((f) => f.metadata.name));
    for (const [name, entry] of this.recent) if (entry.until < now || names.has(name)) this.recent.delete(name);
    return [...cached, ...[...this.recent.values()].filter((e) => e.fire.metadata.namespace === namespace).map((e) => e.fire)];
  }

  private async fire(trigger: Trigger, source: FireSource, firedAt: Date, variables: Record<string, unknown>, deliveryId?: string): Promise<FireAnswer> {
    const sessionName = randomUUID();
    const answer = await this.answerFor(trigger, sessionName);
    const name = deliveryId
      ? deliveryFireName(trigger.metadata.name!, deliveryId)
      : childName(trigger.metadata.name!, `${source === 'manual' ? 'm' : 'w'}-${firedAt.getTime()}-${randomBytes(3).toString('hex')}`);
    const fire = newTriggerFire(trigger, {
      name, source, firedAt, variables, sessionName,
      ...(deliveryId ? { deliveryId } : {}),
      annotations: { [FIRE_ANSWER_ANNOTATION]: JSON.stringify(answer) },
    });
    let result;
    try {
      result = await this.store.createFire(fire);
    } catch (error) {
      // Logged by the error handler (with the cluster's message); the client only learns it failed.
      throw Object.assign(new ApiError(500, 'the fire could not be recorded; try again'), { stack: `fire ${name}: ${(error as Error).stack ?? String(error)}` });
    }
    // A redelivery (also one racing on another replica) gets the answer the first delivery got.
    if ('existing' in result) return readAnswer(result.existing);
    this.recent.set(result.created.metadata.name!, { fire: result.created, until: Date.now() + 10_000 });
    return answer;
  }
}
