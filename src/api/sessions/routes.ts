// REST routes of sessions under /v1/projects/:projectId/sessions (thin: parse, authorize, call
// the service, serialize), and the user's way into a session: the engine event stream, abort,
// and the engine and port proxies, relayed to its daemon (relay.ts).
import { Router, type Request, type Response } from 'express';
import { requireAccess } from '../auth.js';
import type { Requirement } from '../authz.js';
import { enginePath } from './engine-path.js';
import { abortRun, relayToDaemon } from './relay.js';
import type { SessionService } from './service.js';
import { parsePort, parsePrompt, parseStart, parseStatusFilter } from './validate.js';
import { parseUuid } from '../ids.js';
import { parseLimit } from '../query.js';

export interface SessionRoutesConfig {
  /** The namespace (account) whose projects this API serves. */
  namespace: string;
}

const START = 'project.session.start';
const STOP = 'project.session.stop';
const READ = 'project.session.read';
/** The most a listing with ?limit= answers (without it: every session). */
const MAX_SESSIONS_LISTED = 10_000;

/** What a route needs; `ownSessionOnly`: a session's own token reaches no other session here. */
type RouteNeed = Omit<Requirement, 'projectUid' | 'sessionId'> & { ownSessionOnly?: boolean };

/** 400 for a malformed id, 403 without the access, 404 for an unknown project: in that order. */
async function projectFor(service: SessionService, config: SessionRoutesConfig, req: Request, res: Response, need: RouteNeed) {
  const params = req.params as Record<string, string>;
  const projectId = parseUuid(String(params.projectId), 'project id');
  const sessionId = params.sessionId === undefined ? undefined : parseUuid(String(params.sessionId), 'session id');
  const { ownSessionOnly, ...requirement } = need;
  const principal = requireAccess(res, { ...requirement, projectUid: projectId, ...(ownSessionOnly && sessionId ? { sessionId } : {}) });
  const project = await service.project(config.namespace, projectId);
  return { project, sessionId: sessionId!, principal };
}

export function sessionRoutes(service: SessionService, config: SessionRoutesConfig): Router {
  const router = Router({ mergeParams: true });
  const resolve = (req: Request, res: Response, need: RouteNeed) => projectFor(service, config, req, res, need);

  router.post('/', async (req, res) => {
    const { project, principal } = await resolve(req, res, { access: 'write', capability: START });
    const request = parseStart(req.body);
    const session = await service.start(project, request, principal.userId);
    res.status(201).json({ session: await service.serialize(project, session) });
  });

  router.get('/', async (req, res) => {
    const status = parseStatusFilter(req.query.status);
    const limit = parseLimit(req.query.limit, MAX_SESSIONS_LISTED, undefined);
    const { project } = await resolve(req, res, { access: 'read' });
    const sessions = await service.list(project, status);
    const listed = limit === undefined ? sessions : sessions.slice(0, limit);
    const serialized = await Promise.all(listed.map((s) => service.serialize(project, s, 'cached')));
    // the newest `limit`, and how many there are: a project whose cron fires every minute has thousands
    res.json(limit === undefined ? { sessions: serialized } : { sessions: serialized, total: sessions.length });
  });

  router.get('/:sessionId', async (req, res) => {
    const { project, sessionId } = await resolve(req, res, { access: 'read' });
    // polled by dashboards, CLIs and scripts: from the caches (a live read per poll otherwise)
    res.json({ session: await service.serialize(project, await service.get(project, sessionId, 'cached'), 'cached') });
  });

  router.post('/:sessionId/stop', async (req, res) => {
    const { project, sessionId } = await resolve(req, res, { access: 'write', capability: STOP, ownSessionOnly: true });
    res.json({ session: await service.serialize(project, await service.stop(project, sessionId)) });
  });

  router.post('/:sessionId/prompt', async (req, res) => {
    const { project, sessionId } = await resolve(req, res, { access: 'write', capability: START, ownSessionOnly: true });
    const text = parsePrompt(req.body);
    res.status(202).json({ session: await service.serialize(project, await service.prompt(project, sessionId, text)) });
  });

  // The engine's current run stops; the session keeps running (the daemon's /svc/abort).
  router.post('/:sessionId/abort', async (req, res) => {
    const { project, sessionId, principal } = await resolve(req, res, { access: 'write', capability: STOP, ownSessionOnly: true });
    await abortRun(service, project, sessionId, principal.userId);
    res.json({ session: await service.serialize(project, await service.get(project, sessionId)) });
  });

  // A failed session's sandbox log, kept until the session is deleted (text, bounded and redacted).
  router.get('/:sessionId/daemon-log', async (req, res) => {
    const { project, sessionId } = await resolve(req, res, { access: 'read', capability: READ, ownSessionOnly: true });
    const log = await service.daemonLog(project, sessionId);
    res.type('text/plain; charset=utf-8').set('Cache-Control', 'no-store').send(log);
  });

  // The engine's event stream (SSE, its /event), the one engine path a read token reaches.
  router.get('/:sessionId/events', async (req, res) => {
    const { project, sessionId, principal } = await resolve(req, res, { access: 'read', ownSessionOnly: true });
    const query = req.originalUrl.includes('?') ? req.originalUrl.slice(req.originalUrl.indexOf('?')) : '';
    await relayToDaemon(service, req, res, { project, sessionId, userId: principal.userId, scope: 'engine', path: `/event${query}`, body: false });
  });

  return router;
}

/**
 * `ANY /sessions/:sessionId/engine/*` and `ANY /sessions/:sessionId/proxy/:port/*`: write access
 * and project.session.start for every method (what reaches the engine or a port can run
 * anything in the sandbox), and a session's own token only on its own session. Bodies are not
 * parsed: they stream to the daemon, and the answer (SSE included) streams back.
 */
export function sessionProxyRoutes(service: SessionService, config: SessionRoutesConfig, kind: 'engine' | 'proxy'): Router {
  const router = Router({ mergeParams: true });
  router.use(async (req, res) => {
    const { project, sessionId, principal } = await projectFor(service, config, req, res, { access: 'write', capability: START, ownSessionOnly: true });
    // req.url is what follows the mount path (.../engine or .../proxy/:port), raw
    if (kind === 'engine') {
      await relayToDaemon(service, req, res, { project, sessionId, userId: principal.userId, scope: 'engine', path: enginePath(req.url) });
      return;
    }
    const port = parsePort(String((req.params as Record<string, string>).port));
    await relayToDaemon(service, req, res, { project, sessionId, userId: principal.userId, scope: `proxy:${port}`, path: `/proxy/${port}${req.url}`, proxyPort: port });
  });
  return router;
}
