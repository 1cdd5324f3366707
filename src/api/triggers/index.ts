import type { RouteGroup } from '../groups.js';
import { triggerRoutes, type TriggerRoutesConfig } from './routes.js';
import type { TriggerService } from './service.js';

// Triggers over REST (listing, fires, manual fire, resume) and the fire service the webhook receiver shares.
export { triggerRoutes, serializeFire, parseFireRequest, type TriggerRoutesConfig } from './routes.js';
export { TriggerService, type FireAnswer, type TriggerServiceOptions, type WebhookRequest, type WebhookTarget } from './service.js';
export { kubeTriggerStore } from './kube-store.js';
export type { TriggerStore } from './store.js';

/** The triggers route group: bearer auth, JSON bodies, under /v1/projects/:projectId/triggers. */
export function triggersGroup(service: TriggerService, config: TriggerRoutesConfig): RouteGroup {
  return { path: '/v1/projects/:projectId/triggers', auth: 'bearer', body: 'json', router: triggerRoutes(service, config) };
}
