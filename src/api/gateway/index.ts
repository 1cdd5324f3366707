// The model gateway's REST routes (DESIGN §8.2): provider keys, usage, logs, budget (docs/gateway.md).
import type { RouteGroup } from '../groups.js';
import { gatewayRoutes, type GatewayRoutesConfig } from './routes.js';
import type { GatewayService } from './service.js';
import type { GatewayStore } from './store.js';

export { gatewayRoutes, CAPABILITY as GATEWAY_CAPABILITY, type GatewayRoutesConfig } from './routes.js';
export { GatewayService, describeBudget, type BudgetAnswer } from './service.js';
export { GatewayWriteConflict, type GatewayStore } from './store.js';
export { kubeGatewayStore, type KubeGatewayStore } from './kube-store.js';
export { UsageRecorder, type RecorderOptions } from './recorder.js';
export { BudgetHints } from './budget-hints.js';

/** The gateway's REST group: bearer auth, JSON bodies, under /v1/projects/:projectId/gateway. */
export function gatewayGroup(service: GatewayService, store: GatewayStore, config: GatewayRoutesConfig): RouteGroup {
  return { path: '/v1/projects/:projectId/gateway', auth: 'bearer', body: 'json', router: gatewayRoutes(service, store, config) };
}
