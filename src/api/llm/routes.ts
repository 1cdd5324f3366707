// The data path's one route: ANY /v1/llm/<provider>/<upstream path> (docs/gateway.md). Order: the
// session key (401), the provider (404), the path its protocol serves (404/405), the body (413),
// the budget (429), then the relay.
import { Router } from 'express';
import { ApiError } from '../errors.js';
import { BudgetExceeded, routeProblem, type LlmRelay } from './relay.js';

/** `/<provider>/<path>?<query>` of a request mounted under /v1/llm, or an error (dot segments and encoded slashes are refused). */
export function splitTarget(url: string): { provider: string; path: string; query: string } {
  const q = url.indexOf('?');
  const pathname = q < 0 ? url : url.slice(0, q);
  const query = q < 0 ? '' : url.slice(q);
  const segments = pathname.split('/').slice(1);
  if (segments.some((s) => s === '' || s === '.' || s === '..' || /%2f|%5c|%2e/i.test(s) || s.includes('\\'))) {
    throw new ApiError(400, 'the path has an empty, dot or encoded-slash segment');
  }
  const [provider, ...rest] = segments;
  if (!provider || rest.length === 0) throw new ApiError(404, 'use {SVC_LLM_BASE_URL}/<provider>/<upstream path>, e.g. /v1/llm/openai/chat/completions');
  return { provider, path: rest.join('/'), query };
}

export function llmRoutes(relay: LlmRelay): Router {
  const router = Router();
  router.use(async (req, res) => {
    const caller = relay.authenticate(req.headers);
    const target = splitTarget(req.url);
    const provider = relay.provider(caller, target.provider);
    const problem = routeProblem(provider.protocol, req.method, target.path);
    if (problem) throw new ApiError(problem.status, problem.message);
    try {
      await relay.relay(req, res, caller, provider, target.path, target.query);
    } catch (error) {
      if (error instanceof BudgetExceeded && error.retryAfterSeconds !== null) res.set('retry-after', String(error.retryAfterSeconds));
      throw error;
    }
  });
  return router;
}
