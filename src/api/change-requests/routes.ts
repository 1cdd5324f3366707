// REST routes of SPEC §4.1 under /v1/projects/:projectId/change-requests (thin: parse,
// authorize, call the service, serialize).
import { Router, type Request, type Response } from 'express';
import { requireAccess } from '../auth.js';
import type { Requirement } from '../authz.js';
import type { ChangeRequest, Project } from '../../resources/index.js';
import { serializeChangeRequest } from './serialize.js';
import type { ChangeRequestService } from './service.js';
import {
  parseCreate, parseEdit, parseEmpty, parseMerge, parseOriginFilter, parseRequestChanges, parseStatusFilter,
} from './validate.js';
import { parseUuid } from '../ids.js';
import { queryString } from '../query.js';

export interface ChangeRequestRoutesConfig {
  /** The namespace (account) whose projects this API serves. */
  namespace: string;
}

const PUSH = 'project.gitops.push';
const MERGE = 'project.gitops.merge';

export function changeRequestRoutes(service: ChangeRequestService, config: ChangeRequestRoutesConfig): Router {
  const router = Router({ mergeParams: true });

  /** 400 for a malformed id, 403 without the access, 404 for an unknown project: in that order. */
  async function projectFor(req: Request, res: Response, need: Omit<Requirement, 'projectUid'>) {
    const projectId = parseUuid(String((req.params as Record<string, string>).projectId), 'project id');
    const crId = req.params.crId === undefined ? undefined : parseUuid(String(req.params.crId), 'change request id');
    const principal = requireAccess(res, { ...need, projectUid: projectId });
    const project = await service.project(config.namespace, projectId);
    return { project, crId: crId!, principal };
  }

  /**
   * projectFor for a change a request makes to one change request: a session's own token acts only
   * on those its session opened (another session's would take its feedback, a person's is theirs).
   */
  async function changeFor(req: Request, res: Response, need: Omit<Requirement, 'projectUid'>) {
    const found = await projectFor(req, res, need);
    if (found.principal.sessionId !== undefined) {
      const origin = await service.originOf(found.project, found.crId);
      requireAccess(res, { ...need, projectUid: found.project.metadata.uid!, sessionId: origin });
    }
    return found;
  }

  async function send(res: Response, project: Project, cr: ChangeRequest | ChangeRequest[], status = 200) {
    const owner = { accountId: await service.accountId(config.namespace), projectId: project.metadata.uid! };
    if (Array.isArray(cr)) res.status(status).json({ change_requests: cr.map((c) => serializeChangeRequest(c, owner)) });
    else res.status(status).json({ change_request: serializeChangeRequest(cr, owner) });
  }

  router.get('/', async (req, res) => {
    const filter = parseStatusFilter(req.query.status);
    const originSessionId = parseOriginFilter(queryString(req, 'origin_session_id'));
    const { project } = await projectFor(req, res, { access: 'read' });
    await send(res, project, await service.list(project, filter, originSessionId));
  });

  router.post('/', async (req, res) => {
    const need = { access: 'write', capability: PUSH } as const;
    const { project, principal } = await projectFor(req, res, need);
    const request = parseCreate(req.body);
    // a session's token opens change requests in its own session's name only (its feedback goes there)
    const sessionId = request.sessionId ?? principal.sessionId;
    requireAccess(res, { ...need, projectUid: project.metadata.uid!, sessionId });
    await send(res, project, await service.create(project, { ...request, sessionId }, principal.userId), 201);
  });

  router.get('/:crId', async (req, res) => {
    const { project, crId } = await projectFor(req, res, { access: 'read' });
    await send(res, project, await service.get(project, crId));
  });

  router.patch('/:crId', async (req, res) => {
    const { project, crId } = await changeFor(req, res, { access: 'write' });
    const edit = parseEdit(req.body);
    await send(res, project, await service.edit(project, crId, edit));
  });

  router.get('/:crId/diff', async (req, res) => {
    const { project, crId } = await projectFor(req, res, { access: 'read' });
    // The patch is streamed as the first member (the file list, with its truncated marks, is known
    // only at the end); an error before the first byte is still a normal error answer.
    const stream = jsonWithStreamedString(res, 'patch');
    const { patch: _streamed, ...rest } = await service.diff(project, crId, stream.write);
    stream.end(rest);
  });

  router.get('/:crId/merge-preview', async (req, res) => {
    const { project, crId } = await projectFor(req, res, { access: 'read' });
    res.json(await service.preview(project, crId));
  });

  router.post('/:crId/merge', async (req, res) => {
    const { project, crId, principal } = await changeFor(req, res, { access: 'write', capability: MERGE });
    const body = parseMerge(req.body);
    await send(res, project, await service.merge(project, crId, body, principal.userId));
  });

  router.post('/:crId/close', async (req, res) => {
    const { project, crId, principal } = await changeFor(req, res, { access: 'write' });
    parseEmpty(req.body, 'close');
    await send(res, project, await service.close(project, crId, principal.userId));
  });

  router.post('/:crId/reopen', async (req, res) => {
    const { project, crId } = await changeFor(req, res, { access: 'write' });
    parseEmpty(req.body, 'reopen');
    await send(res, project, await service.reopen(project, crId));
  });

  router.post('/:crId/request-changes', async (req, res) => {
    const { project, crId, principal } = await changeFor(req, res, { access: 'write', capability: PUSH });
    const feedback = parseRequestChanges(req.body);
    await send(res, project, await service.requestChanges(project, crId, feedback, principal.userId));
  });

  return router;
}

/**
 * Writes `{"<name>":"<chunks...>", ...rest}` to `res`: the string member streamed chunk by chunk
 * (waiting for the socket to drain), the rest at the end.
 */
function jsonWithStreamedString(res: Response, name: string) {
  let started = false;
  const start = () => {
    if (started) return;
    started = true;
    res.status(200).type('application/json');
    res.write(`{${JSON.stringify(name)}:"`);
  };
  return {
    write: async (chunk: string) => {
      start();
      if (!res.write(JSON.stringify(chunk).slice(1, -1))) await drained(res);
    },
    end: (rest: Record<string, unknown>) => {
      start();
      const members = JSON.stringify(rest).slice(1);
      res.end(members === '}' ? '"}' : `",${members}`);
    },
  };
}

/** Resolves when `res` can take more, or is gone. */
function drained(res: Response): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
