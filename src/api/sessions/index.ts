// Sessions (issue 10, DESIGN §4): REST routes, the engine and port proxies, the domain service,
// its store port and the kube adapter.
import type { RouteGroup } from '../groups.js';
import { sessionProxyRoutes, sessionRoutes, type SessionRoutesConfig } from './routes.js';
import type { SessionService } from './service.js';

export { sessionRoutes, sessionProxyRoutes, type SessionRoutesConfig } from './routes.js';
export { SessionService, type SessionServiceOptions } from './service.js';
export { kubeSessionStore } from './kube-store.js';
export type { SessionStore } from './store.js';
export { serializeSession, type SerializedSession } from './serialize.js';

/**
 * Three groups, all bearer: the REST routes (JSON bodies), and the engine and port proxies
 * (bodies not read: they stream to the sandbox). The proxies' deeper paths mount first.
 */
export function sessionsGroups(service: SessionService, config: SessionRoutesConfig): RouteGroup[] {
  const base = '/v1/projects/:projectId/sessions';
  return [
    { path: base, auth: 'bearer', body: 'json', router: sessionRoutes(service, config) },
    { path: `${base}/:sessionId/engine`, auth: 'bearer', body: 'none', router: sessionProxyRoutes(service, config, 'engine') },
    { path: `${base}/:sessionId/proxy/:port`, auth: 'bearer', body: 'none', router: sessionProxyRoutes(service, config, 'proxy') },
  ];
}
