// Change requests (SPEC §2.2, §3.1, §4.1): routes, domain service, store port and its kube adapter.
export { changeRequestRoutes, type ChangeRequestRoutesConfig } from './routes.js';
export { ChangeRequestService, type ChangeRequestServiceOptions } from './service.js';
export { kubeChangeRequestStore, projectGitCredentials } from './kube-store.js';
export type { ChangeRequestStore, ChangeRequestEvent } from './store.js';
export { serializeChangeRequest, type SerializedChangeRequest } from './serialize.js';
export { transition, type ChangeRequestAction, type Transition } from './state.js';
