// Change requests (SPEC §2.2, §3.1, §4.1): routes, domain service, store port and its kube adapter.
import type { RouteGroup } from '../groups.js';
import { changeRequestRoutes, type ChangeRequestRoutesConfig } from './routes.js';
import type { ChangeRequestService } from './service.js';

export { changeRequestRoutes, type ChangeRequestRoutesConfig } from './routes.js';
export { ChangeRequestService, type ChangeRequestServiceOptions } from './service.js';
export { kubeChangeRequestStore } from './kube-store.js';
export type { ChangeRequestStore, ChangeRequestEvent } from './store.js';
export { serializeChangeRequest, type SerializedChangeRequest } from './serialize.js';
export { transition, type ChangeRequestAction, type Transition } from './state.js';

/** The change-requests route group: bearer auth, JSON bodies, under /v1/projects/:projectId/change-requests. */
export function changeRequestsGroup(service: ChangeRequestService, config: ChangeRequestRoutesConfig): RouteGroup {
  return { path: '/v1/projects/:projectId/change-requests', auth: 'bearer', body: 'json', router: changeRequestRoutes(service, config) };
}
