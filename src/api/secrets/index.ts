// Project secrets (SPEC §2.4): routes, service, store port and its kube adapter (docs/secrets.md).
import type { RouteGroup } from '../groups.js';
import { secretsRoutes, type SecretsRoutesConfig } from './routes.js';
import type { ProjectSecretsService } from './service.js';

export { secretsRoutes, type SecretsRoutesConfig } from './routes.js';
export { ProjectSecretsService, type ProjectSecretsStore } from './service.js';
export { kubeProjectSecretsStore } from './kube-store.js';

/** The secrets route group: bearer auth, JSON bodies, under /v1/projects/:projectId/secrets. */
export function secretsGroup(service: ProjectSecretsService, config: SecretsRoutesConfig): RouteGroup {
  return { path: '/v1/projects/:projectId/secrets', auth: 'bearer', body: 'json', router: secretsRoutes(service, config) };
}
