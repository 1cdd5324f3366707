// Trigger REST routes under /v1/projects/:projectId/triggers (thin: parse, authorize, call the
// service, serialize): the live listing, a trigger's recent fires, manual fire and resume.
import { Router, type Request, type Response } from 'express';
import { requireAccess } from '../auth.js';
import type { Requirement } from '../authz.js';
import { badRequest } from '../errors.js';
import { serializeTrigger } from '../projects/serialize.js';
import { parseUuid } from '../ids.js';
import { parseLimit } from '../query.js';
import type { TriggerFire } from '../../resources/index.js';
import type { TriggerService } from './service.js';

export interface TriggerRoutesConfig {
  /** The namespace (account) whose projects this API serves. */
  namespace: string;
}

const FIRE = 'project.trigger.fire';
const UPDATE = 'project.trigger.update';
const MAX_FIRES = 500;

export function serializeFire(fire: TriggerFire) {
  return {
    name: fire.metadata.name!,
    source: fire.spec.source,
    fired_at: fire.spec.firedAt,
    phase: fire.status?.phase ?? 'pending',
    reason: fire.status?.reason ?? null,
    queue_position: fire.status?.phase === 'queued' ? fire.status.queuePosition ?? null : null,
    session_id: fire.status?.sessionName ?? null,
    delivery_id: fire.spec.deliveryId ?? null,
  };
}

/** `{ message?: { text, source? } }`; 400 naming every problem. */
export function parseFireRequest(body: unknown): { text: string; source?: string } | undefined {
  if (body === undefined || (typeof body === 'object' && body !== null && !Array.isArray(body) && Object.keys(body).length === 0)) return undefined;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('request body must be a JSON object: { "message"?: { "text": string, "source"?: string } }');
  const problems: string[] = [];
  const unknown = Object.keys(body).filter((k) => k !== 'message');
  if (unknown.length) problems.push(`unknown field(s): ${unknown.join(', ')} (allowed: message)`);
  const message = (body as { message?: unknown }).message;
  if (message === undefined) {
    if (problems.length) throw badRequest(problems.join('; '), { problems });
    return undefined;
  }
  if (typeof message !== 'object' || message === null || Array.isArray(message)) throw badRequest('message must be an object { "text": string, "source"?: string }');
  const { text, source, ...rest } = message as Record<string, unknown>;
  if (Object.keys(rest).length) problems.push(`unknown message field(s): ${Object.keys(rest).join(', ')} (allowed: text, source)`);
  if (typeof text !== 'string') problems.push('message.text is required and must be a string');
  else if (text.includes('\0')) problems.push('message.text must not contain a NUL character'); // it becomes a prompt
  if (source !== undefined && typeof source !== 'string') problems.push('message.source must be a string');
  if (problems.length) throw badRequest(problems.join('; '), { problems });
  return { text: text as string, ...(source !== undefined ? { source: source as string } : {}) };
}

export function triggerRoutes(service: TriggerService, config: TriggerRoutesConfig): Router {
  const router = Router({ mergeParams: true });

  /** 400 for a malformed id, 403 without the access, 404 for an unknown project or trigger: in that order. */
  async function projectFor(req: Request, res: Response, need: Omit<Requirement, 'projectUid'>) {
    const projectId = parseUuid(String((req.params as Record<string, string>).projectId), 'project id');
    const principal = requireAccess(res, { ...need, projectUid: projectId });
    return { project: await service.requireProject(config.namespace, projectId), principal };
  }

  router.get('/', async (req, res) => {
    const { project } = await projectFor(req, res, { access: 'read' });
    // a webhook trigger says whether its secret is set: until it is, every delivery gets 409
    const listed = service.triggers(project);
    const set = listed.some((t) => t.spec.type === 'webhook') ? await service.setSecrets(project) : new Set<string>();
    const triggers = listed.map((trigger) => trigger.spec.type === 'webhook'
      ? { ...serializeTrigger(trigger), secret_configured: set.has(trigger.spec.secretEnv ?? '') }
      : serializeTrigger(trigger));
    res.json({ triggers, errors: project.status?.triggerErrors ?? [] });
  });

  router.get('/:slug/fires', async (req, res) => {
    const { project } = await projectFor(req, res, { access: 'read' });
    const limit = parseLimit(req.query.limit, MAX_FIRES, 50);
    const trigger = service.requireTrigger(project, req.params.slug!);
    res.json({ fires: service.fires(trigger, limit).map(serializeFire) });
  });

  router.post('/:slug/fire', async (req, res) => {
    const { project, principal } = await projectFor(req, res, { access: 'write', capability: FIRE });
    const message = parseFireRequest(req.body);
    const trigger = service.requireTrigger(project, req.params.slug!);
    res.status(202).json(await service.fireManually(trigger, principal.userId, message));
  });

  router.post('/:slug/resume', async (req, res) => {
    const { project } = await projectFor(req, res, { access: 'write', capability: UPDATE });
    const trigger = service.requireTrigger(project, req.params.slug!);
    res.json({ trigger: serializeTrigger(await service.resume(trigger)) });
  });

  return router;
}
