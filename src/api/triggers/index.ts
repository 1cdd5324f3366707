// Triggers over REST (listing, fires, manual fire, resume) and the fire service the webhook receiver shares.
export { triggerRoutes, serializeFire, parseFireRequest, type TriggerRoutesConfig } from './routes.js';
export { TriggerService, type FireAnswer, type TriggerServiceOptions, type WebhookRequest } from './service.js';
export { kubeTriggerStore, type KubeTriggerStore } from './kube-store.js';
export type { TriggerStore } from './store.js';
