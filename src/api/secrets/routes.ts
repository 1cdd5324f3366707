// REST routes of project secrets under /v1/projects/:projectId/secrets (thin; DESIGN §4):
// PUT /:name { value } 204, DELETE /:name 204, GET / { secrets: [{ name, updated_at }], revision }.
import { Router, type Request, type Response } from 'express';
import { requireAccess } from '../auth.js';
import type { Requirement } from '../authz.js';
import { badRequest } from '../errors.js';
import { parseUuid } from '../ids.js';
import { secretNameProblem, secretValueProblem } from '../../resources/index.js';
import type { ProjectSecretsService } from './service.js';

export interface SecretsRoutesConfig {
  namespace: string;
}

const READ = 'project.secret.read';
const WRITE = 'project.secret.write';

function parseName(value: string): string {
  const problem = secretNameProblem(value);
  if (problem) throw badRequest(`invalid secret name: ${problem}`);
  return value;
}

function parseValue(body: unknown): string {
  const input = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  const unknown = Object.keys(input).filter((field) => field !== 'value');
  if (unknown.length) throw badRequest(`unknown field(s): ${unknown.slice(0, 10).join(', ')} (allowed: value)`);
  const { value } = input;
  if (typeof value !== 'string') throw badRequest('request body must be a JSON object { "value": "<the secret>" } with a string value');
  const problem = secretValueProblem(value);
  if (problem) throw badRequest(problem);
  return value;
}

export function secretsRoutes(service: ProjectSecretsService, config: SecretsRoutesConfig): Router {
  const router = Router({ mergeParams: true });

  /** 400 for a malformed id, 403 without the access, then the request, then 404 for an unknown project. */
  function authorized(req: Request, res: Response, need: Omit<Requirement, 'projectUid'>): string {
    const projectId = parseUuid(String((req.params as Record<string, string>).projectId), 'project id');
    requireAccess(res, { ...need, projectUid: projectId });
    return projectId;
  }

  router.get('/', async (req, res) => {
    const projectId = authorized(req, res, { access: 'read', capability: READ });
    res.json(await service.list(await service.project(config.namespace, projectId)));
  });

  router.put('/:name', async (req, res) => {
    const projectId = authorized(req, res, { access: 'write', capability: WRITE });
    const name = parseName(String(req.params.name));
    const value = parseValue(req.body);
    await service.set(await service.project(config.namespace, projectId), name, value);
    res.status(204).end();
  });

  router.delete('/:name', async (req, res) => {
    const projectId = authorized(req, res, { access: 'write', capability: WRITE });
    const name = parseName(String(req.params.name));
    await service.remove(await service.project(config.namespace, projectId), name);
    res.status(204).end();
  });

  return router;
}
