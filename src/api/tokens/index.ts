// The tokens route group (docs/tokens.md): bearer auth, JSON bodies, under /v1/tokens. The
// service is also what `svc tokens` runs with an admin's kubeconfig.
import type { RouteGroup } from '../groups.js';
import { tokenRoutes, type TokenRoutesDeps } from './routes.js';

export { kubeTokenStore, kubeTokenToucher } from './kube-store.js';
export { capabilitiesProblem, expiryFrom, narrowGrant, parseCreateToken, serializeToken, tokenNameProblem, type SerializedToken } from './policy.js';
export { TokenService, type MintedToken, type TokenStore } from './service.js';
export type { TokenRoutesDeps };

export function tokensGroup(deps: TokenRoutesDeps): RouteGroup {
  return { path: '/v1/tokens', auth: 'bearer', body: 'json', router: tokenRoutes(deps) };
}
