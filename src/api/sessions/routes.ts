// REST routes of sessions under /v1/projects/:projectId/sessions (thin: parse, authorize, call
// the service, serialize), and the user's way into a session: the engine and port proxies,
// which sign X-Svc-User-Context with the sandbox's token and stream to its daemon.
import http from 'node:http';
import { Router, type Request, type Response } from 'express';
import { signContextHeader, type ContextScope } from '../../lib/context-header.js';
import { requireAccess } from '../auth.js';
import type { Requirement } from '../authz.js';
import type { SessionService } from './service.js';
import { parsePort, parsePrompt, parseStart, parseStatusFilter, parseUuid } from './validate.js';

export interface SessionRoutesConfig {
  /** The namespace (account) whose projects this API serves. */
  namespace: string;
}

const START = 'project.session.start';
const STOP = 'project.session.stop';

/** 400 for a malformed id, 403 without the access, 404 for an unknown project: in that order. */
async function projectFor(service: SessionService, config: SessionRoutesConfig, req: Request, res: Response, need: Omit<Requirement, 'projectUid'>) {
  const params = req.params as Record<string, string>;
  const projectId = parseUuid(String(params.projectId), 'project id');
  const sessionId = params.sessionId === undefined ? undefined : parseUuid(String(params.sessionId), 'session id');
  const principal = requireAccess(res, { ...need, projectUid: projectId });
  const project = await service.project(config.namespace, projectId);
  return { project, sessionId: sessionId!, principal };
}

export function sessionRoutes(service: SessionService, config: SessionRoutesConfig): Router {
  const router = Router({ mergeParams: true });
  const resolve = (req: Request, res: Response, need: Omit<Requirement, 'projectUid'>) => projectFor(service, config, req, res, need);

  router.post('/', async (req, res) => {
    const { project, principal } = await resolve(req, res, { access: 'write', capability: START });
    const request = parseStart(req.body);
    const session = await service.start(project, request, principal.userId);
    res.status(201).json({ session: await service.serialize(project, session) });
  });

  router.get('/', async (req, res) => {
    const status = parseStatusFilter(req.query.status);
    const { project } = await resolve(req, res, { access: 'read' });
    const sessions = await service.list(project, status);
    res.json({ sessions: await Promise.all(sessions.map((s) => service.serialize(project, s))) });
  });

  router.get('/:sessionId', async (req, res) => {
    const { project, sessionId } = await resolve(req, res, { access: 'read' });
    res.json({ session: await service.serialize(project, await service.get(project, sessionId)) });
  });

  router.post('/:sessionId/stop', async (req, res) => {
    const { project, sessionId } = await resolve(req, res, { access: 'write', capability: STOP });
    res.json({ session: await service.serialize(project, await service.stop(project, sessionId)) });
  });

  router.post('/:sessionId/prompt', async (req, res) => {
    const { project, sessionId } = await resolve(req, res, { access: 'write', capability: START });
    const text = parsePrompt(req.body);
    res.status(202).json({ session: await service.serialize(project, await service.prompt(project, sessionId, text)) });
  });

  return router;
}

// Hop-by-hop headers (RFC 9110 §7.6.1) and what must not reach an untrusted sandbox: the
// caller's API token and cookies.
const DROPPED = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host', 'authorization', 'cookie', 'x-svc-user-context']);

function forwardHeaders(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const listed = new Set(String(headers.connection ?? '').toLowerCase().split(',').map((h) => h.trim()).filter(Boolean));
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !DROPPED.has(name) && !listed.has(name)));
}

/** The part of the URL after `marker` (e.g. `/engine`), with the query, as the daemon's path. */
function upstreamPath(req: Request, marker: RegExp): string {
  const m = marker.exec(req.originalUrl);
  const rest = m?.[1] ?? '';
  return rest.startsWith('/') ? rest : `/${rest}`;
}

/**
 * `ANY /sessions/:sessionId/engine/*` and `ANY /sessions/:sessionId/proxy/:port/*`: read access
 * for GET/HEAD, write for anything else. Bodies are not parsed: they stream to the daemon, and
 * the answer (SSE included) streams back.
 */
export function sessionProxyRoutes(service: SessionService, config: SessionRoutesConfig, kind: 'engine' | 'proxy'): Router {
  const router = Router({ mergeParams: true });
  router.use(async (req, res) => {
    const access = req.method === 'GET' || req.method === 'HEAD' ? 'read' : 'write';
    const { project, sessionId, principal } = await projectFor(service, config, req, res, { access });
    let scope: ContextScope = 'engine';
    let path = upstreamPath(req, /\/sessions\/[^/]+\/engine(\/.*)?$/);
    if (kind === 'proxy') {
      const port = parsePort(String((req.params as Record<string, string>).port));
      scope = `proxy:${port}`;
      path = `/proxy/${port}${upstreamPath(req, /\/sessions\/[^/]+\/proxy\/[^/?]+(\/.*)?$/)}`;
    }
    const target = await service.proxyTarget(project, sessionId);
    const [host, port] = [target.address.slice(0, target.address.lastIndexOf(':')), Number(target.address.slice(target.address.lastIndexOf(':') + 1))];
    const headers = {
      ...forwardHeaders(req.headers),
      'x-svc-user-context': signContextHeader(target.sandboxToken, { sub: principal.userId, sid: sessionId, scope }),
    };
    await new Promise<void>((resolve) => {
      const upstream = http.request({ host, port, method: req.method, path, headers }, (answer) => {
        const out = forwardHeaders(answer.headers);
        res.writeHead(answer.statusCode ?? 502, out);
        res.flushHeaders();
        answer.pipe(res);
        answer.on('end', resolve);
        answer.on('error', () => { res.destroy(); resolve(); });
      });
      upstream.on('error', () => {
        if (!res.headersSent) res.status(502).json({ error: `the sandbox of session ${sessionId} did not answer` });
        else res.destroy();
        resolve();
      });
      // A caller that goes away ends the upstream request too (SSE streams stay open otherwise).
      res.on('close', () => { upstream.destroy(); resolve(); });
      req.pipe(upstream);
    });
  });
  return router;
}
