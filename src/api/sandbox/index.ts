// Routes for sandboxes themselves (their sandbox token, never an API token): svc-agent's state
// events (docs/sessions.md "Events, not polling").
import type { RouteGroup } from '../groups.js';
import { sandboxRoutes, sandboxTokenAuth } from './routes.js';
import type { SandboxEventService } from './service.js';

export { SandboxEventService, DEFAULT_SANDBOX_EVENT_BUDGET, type SandboxEventStore, type SandboxEventBudget } from './service.js';
export { kubeSandboxEventStore } from './kube-store.js';

/** Under /v1/sandbox: the sandbox token checked before the (tiny) JSON body is read. */
export function sandboxGroup(service: SandboxEventService): RouteGroup {
  return { path: '/v1/sandbox', auth: sandboxTokenAuth(service), body: 'json', bodyLimit: '1kb', router: sandboxRoutes(service) };
}
