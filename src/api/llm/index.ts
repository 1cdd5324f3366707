// The model gateway's data path (DESIGN §8.2): `{SVC_LLM_BASE_URL}/<provider>/<upstream path>`.
import type { RouteGroup } from '../groups.js';
import type { LlmRelay } from './relay.js';
import { llmRoutes } from './routes.js';

export { BudgetExceeded, LlmRelay, prepareBody, routeProblem, llmKeyLive, type LlmCaller, type LlmRelayOptions } from './relay.js';
export { splitTarget } from './routes.js';

/**
 * The data-path group: authenticated by the session's model-gateway key inside its route (not an
 * API token), bodies read by the relay itself (streamed, bounded), under /v1/llm.
 */
export function llmGroup(relay: LlmRelay): RouteGroup {
  return { path: '/v1/llm', auth: 'none', body: 'none', router: llmRoutes(relay) };
}
