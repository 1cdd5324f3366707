// GET /v1/me: what the caller's token may do, so a client (the dashboard) shows only the
// actions it can use. The server still checks every call (docs/api.md).
import { Router } from 'express';
import { principalOf } from '../auth.js';
import type { RouteGroup } from '../groups.js';

export interface SerializedPrincipal {
  user_id: string;
  access: 'read' | 'write';
  /** The one project the token reaches, or null for every project of the namespace. */
  project_id: string | null;
  /** Capability names; `["*"]` grants every capability. */
  capabilities: string[];
}

export function meRoutes(): Router {
  const router = Router();
  router.get('/', (_req, res) => {
    const principal = principalOf(res);
    const body: SerializedPrincipal = {
      user_id: principal.userId,
      access: principal.access,
      project_id: principal.projectUid,
      capabilities: principal.capabilities === '*' ? ['*'] : [...principal.capabilities].sort(),
    };
    res.json(body);
  });
  return router;
}

export function meGroup(): RouteGroup {
  return { path: '/v1/me', auth: 'bearer', body: 'none', router: meRoutes() };
}
