// The git gateway (SPEC §4.4): clone credential and smart HTTP for sandboxes (docs/git-gateway.md).
import type { RouteGroup } from '../groups.js';
import { gitRoutes, type GitRoutesConfig } from './routes.js';
import type { GitGatewayService } from './service.js';

export { gitRoutes, type GitRoutesConfig } from './routes.js';
export { GitGatewayService, maxPushBytesFromEnv, type GitGatewayOptions, type GitGatewayStore, type GatewayCaller } from './service.js';
export { kubeGitGatewayStore } from './kube-store.js';

/**
 * The git route group: its routes authenticate themselves (the sandbox token for the clone
 * credential, the clone credential as HTTP Basic for git) and stream the raw bodies to git.
 */
export function gitGroup(service: GitGatewayService, config: GitRoutesConfig): RouteGroup {
  return { path: '/v1/projects/:projectId/git', auth: 'none', body: 'none', router: gitRoutes(service, config) };
}
