// Request metrics of the API (svc_http_*), webhook outcomes and git gateway pushes, counted at
// the response's end with the route template (never the raw path: ids would explode the series).
import type { RequestHandler } from 'express';
import { apiMetrics } from '../lib/metrics.js';

/** Mount path of the route group that handled the request (set by mountGroups). */
export const ROUTE_GROUP_LOCAL = 'routeGroup';
/** A git gateway that refuses a push inside a 200 answer (per-ref "ng") sets this to 'refused'. */
export const GIT_PUSH_OUTCOME_LOCAL = 'gitPushOutcome';

/**
 * `<group path><route path>`; `<group path>/*` when the group answered before a route matched (401,
 * 413); `unmatched` for any other path (its own series would let any client grow the registry).
 */
export function routeTemplate(groupPath: string | undefined, routePath: string | undefined): string {
  if (routePath === undefined) return groupPath ? `${groupPath}/*` : 'unmatched';
  const joined = `${groupPath ?? ''}${routePath === '/' && groupPath ? '' : routePath}`;
  return joined || '/';
}

export function httpMetrics(): RequestHandler {
  const m = apiMetrics();
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    res.once('finish', () => {
      const route = routeTemplate(res.locals[ROUTE_GROUP_LOCAL] as string | undefined, (req.route as { path?: string } | undefined)?.path);
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const status = String(res.statusCode);
      m.requests.inc({ method: req.method, route, status });
      m.requestDuration.observe({ method: req.method, route }, seconds);
      if (req.path.startsWith('/v1/webhooks/')) m.webhookDeliveries.inc({ status });
      if (req.method === 'POST' && req.path.endsWith('/git-receive-pack')) {
        const refused = res.statusCode >= 300 || res.locals[GIT_PUSH_OUTCOME_LOCAL] === 'refused';
        m.gitPushes.inc({ outcome: refused ? 'refused' : 'accepted' });
      }
    });
    next();
  };
}
