// The webhook receiver (SPEC §4.2, §5.4, §7): POST /v1/webhooks/projects/<project_id>/<slug>.
// No API token: the trigger's secret authenticates the raw body bytes. Checks in the SPEC's
// order: 400 ids, 404 project/trigger, 409 secret not configured, 413 body too large,
// 401 authentication, then a redelivery's first answer, 404 for a disabled or paused trigger, and
// 202 fired or queued (429 when the queue is full, 500 when the fire could not be recorded); any
// other method 405. GitHub's ping (X-GitHub-Event: ping), once authenticated, is 200 pong. A
// disabled trigger answers 404 at every step where another would answer otherwise, so only an
// authenticated redelivery of a delivery it accepted learns more (its first answer). Any content
// type; the body is never parsed before authentication.
import express, { Router, type Request } from 'express';
import { SLUG_PATTERN } from '../../resources/index.js';
import { ApiError, badRequest, notFound } from '../errors.js';
import { UUID } from '../ids.js';
import type { RouteGroup } from '../groups.js';
import type { TriggerService, WebhookTarget } from '../triggers/index.js';

export interface WebhookRoutesConfig {
  namespace: string;
  /** Largest accepted body (default 1 MiB); beyond it 413. */
  bodyLimit?: string | number;
}

export const DEFAULT_WEBHOOK_BODY_LIMIT = '1mb';

export function webhookRoutes(service: TriggerService, config: WebhookRoutesConfig): Router {
  const router = Router();
  const rawBody = express.raw({ type: () => true, limit: config.bodyLimit ?? DEFAULT_WEBHOOK_BODY_LIMIT });

  router.post('/projects/:projectId/:slug', async (req, res, next) => {
    const { projectId, slug } = req.params;
    if (!UUID.test(projectId) || !SLUG_PATTERN.test(slug)) throw badRequest('malformed project id or trigger slug');
    res.locals.target = await service.webhookTarget(config.namespace, projectId.toLowerCase(), slug);
    next();
  }, (req, res, next) => {
    // a disabled trigger answers 404 to whatever it is sent, a body too large included
    rawBody(req, res, (error?: unknown) => next(error && (res.locals.target as WebhookTarget).disabled ? notFound('not found') : error));
  }, async (req: Request, res) => {
    const target = res.locals.target as WebhookTarget;
    const request = { headers: req.headers, rawBody: Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0) };
    service.authenticate(request, target);
    // GitHub's ping when a webhook is made is a check of the setup, not an event: it starts no agent
    if (req.get('x-github-event') === 'ping') {
      if (target.disabled) throw notFound('not found');
      res.status(200).json({ status: 'pong', message: `trigger ${target.trigger.spec.slug} is reached and the delivery is authenticated by its secret; nothing fired (GitHub's ping)` });
      return;
    }
    res.status(202).json(await service.fireWebhook(target.trigger, request));
  });

  // Someone trying the URL in a browser or with curl's default GET: say what it takes, not "missing bearer token".
  router.all('/projects/:projectId/:slug', (req, res) => {
    res.set('Allow', 'POST');
    throw new ApiError(405, `a webhook takes POST (a delivery signed with the trigger's secret), not ${req.method}`);
  });

  return router;
}

/**
 * The webhook route group: no API token (the trigger's secret authenticates), and no body parser
 * of the group: the route reads the raw bytes itself, after the 400/404/409 checks.
 */
export function webhooksGroup(service: TriggerService, config: WebhookRoutesConfig): RouteGroup {
  return { path: '/v1/webhooks', auth: 'none', body: 'none', router: webhookRoutes(service, config) };
}
