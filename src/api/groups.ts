// Route groups: one folder per group under src/api/, each declaring where it is mounted, how
// its callers authenticate and how its request bodies are parsed. The app mounts them; no
// middleware runs on all of /v1 (the webhook receiver verifies an HMAC over the raw bytes and the
// git gateway takes a sandbox token, so neither can sit behind bearer auth or express.json).
import express, { type Express, type RequestHandler, type Router } from 'express';
import { authenticate } from './auth.js';
import { ROUTE_GROUP_LOCAL } from './metrics.js';
import type { TokenVerifier } from './tokens.js';

/**
 * - `bearer`: an svc API token (`Authorization: Bearer svc_...`), checked BEFORE the body is read;
 *   the principal lands in res.locals (`requireAccess`).
 * - `none`: the group authenticates inside its routes (webhooks: signature or token over the raw body).
 * - a middleware: the group's own scheme (the git gateway: sandbox token or clone credential),
 *   run before the body is read.
 */
export type GroupAuth = 'bearer' | 'none' | RequestHandler;

/** `json`: express.json (REST); `raw`: the bytes as a Buffer in req.body (webhooks, git); `none`: not read. */
export type GroupBody = 'json' | 'raw' | 'none';

export interface RouteGroup {
  /** Mount path from the app root, e.g. `/v1/projects` or `/v1/projects/:projectId/git`
   *  (params reach the router when it is created with `Router({ mergeParams: true })`). */
  path: string;
  auth: GroupAuth;
  body: GroupBody;
  /** Largest accepted body; default ApiConfig.bodyLimit (1mb). */
  bodyLimit?: string;
  router: Router;
}

export interface MountOptions {
  verifyToken: TokenVerifier;
  bodyLimit: string;
}

function bodyParser(group: RouteGroup, limit: string): RequestHandler[] {
  switch (group.body) {
    // whatever the Content-Type says (as GitHub's API reads its bodies): a body of another declared
    // type was dropped without a word, and a route whose fields are optional went ahead without
    // them (a merge without its expected head); not JSON, it is a 400
    case 'json': return [express.json({ limit: group.bodyLimit ?? limit, type: () => true })];
    // any content type: a webhook sender or git client chooses its own
    case 'raw': return [express.raw({ type: () => true, limit: group.bodyLimit ?? limit })];
    case 'none': return [];
  }
}

/** Bearer auth that a request already authenticated by an earlier (more specific) group skips. */
function bearer(verify: TokenVerifier): RequestHandler {
  const check = authenticate(verify);
  return (req, res, next) => (res.locals.principal ? next() : check(req, res, next));
}

function authMiddleware(group: RouteGroup, options: MountOptions): RequestHandler[] {
  if (group.auth === 'bearer') return [bearer(options.verifyToken)];
  if (group.auth === 'none') return [];
  return [group.auth];
}

const depth = (group: RouteGroup) => group.path.split('/').filter(Boolean).length;

/**
 * Mounts the groups most specific path first, so `/v1/projects/:projectId/git` (sandbox token)
 * answers before `/v1/projects` (bearer) would refuse it. Unknown paths under /v1 still need a
 * bearer token before they learn they are unknown: an anonymous caller gets 401, not the route map.
 */
export function mountGroups(app: Express, groups: RouteGroup[], options: MountOptions): void {
  const ordered = [...groups].sort((a, b) => depth(b) - depth(a));
  for (const group of ordered) {
    const named: RequestHandler = (_req, res, next) => { res.locals[ROUTE_GROUP_LOCAL] = group.path; next(); };
    app.use(group.path, named, ...authMiddleware(group, options), ...bodyParser(group, options.bodyLimit), group.router);
  }
  app.use('/v1', bearer(options.verifyToken));
}
