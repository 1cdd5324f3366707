// /v1/tokens (docs/tokens.md): thin routes. Creating or revoking needs project.members.manage,
// listing project.members.read; a project-scoped caller sees and manages its project's tokens only.
import { Router } from 'express';
import { requireAccess } from '../auth.js';
import { badRequest, notFound } from '../errors.js';
import { clipText } from '../../lib/clip.js';
import { canManageToken, narrowGrant, parseCreateToken, serializeToken } from './policy.js';
import type { TokenService } from './service.js';

export interface TokenRoutesDeps {
  service: TokenService;
  /** Whether a Project with this uid exists in the account. */
  projectExists(uid: string): Promise<boolean>;
  now?: () => Date;
}

export function tokenRoutes(deps: TokenRoutesDeps): Router {
  const router = Router();
  const now = deps.now ?? (() => new Date());

  router.post('/', async (req, res) => {
    const at = now();
    const request = parseCreateToken(req.body, at);
    const caller = requireAccess(res, { access: 'write', projectUid: request.projectUid ?? null, capability: 'project.members.manage' });
    const grant = narrowGrant(caller, request);
    if (grant.projectUid && !(await deps.projectExists(grant.projectUid))) throw badRequest(`project_id ${grant.projectUid} is not a project of this account`);
    const minted = await deps.service.create({ ...grant, name: request.name });
    res.status(201).json({ token: serializeToken(minted.info, at), value: minted.value });
  });

  router.get('/', async (_req, res) => {
    const caller = requireAccess(res, { access: 'read', projectUid: null, capability: 'project.members.read' });
    const at = now();
    const tokens = (await deps.service.list()).filter((info) => canManageToken(caller, info));
    res.json({ tokens: tokens.map((info) => serializeToken(info, at)) });
  });

  router.delete('/:name', async (req, res) => {
    const caller = requireAccess(res, { access: 'write', projectUid: null, capability: 'project.members.manage' });
    const info = await deps.service.findByName(req.params.name);
    if (!info || !canManageToken(caller, info)) throw notFound(`no token named ${JSON.stringify(clipText(req.params.name, 129))}`);
    await deps.service.revoke(info);
    res.status(204).end();
  });

  return router;
}
