// REST routes of the model gateway under /v1/projects/:projectId/gateway (thin; DESIGN §8.2):
// PUT/GET/DELETE /providers[/:name], GET /usage, GET /logs, PUT/GET /budget.
// Order of checks: malformed project id 400, access 403, the request 400, unknown project 404.
import { Router, type Request, type Response } from 'express';
import { requireAccess } from '../auth.js';
import type { Requirement } from '../authz.js';
import { ApiError, badRequest } from '../errors.js';
import { parseUuid } from '../ids.js';
import { parseLimit, queryString } from '../query.js';
import { parseRfc3339 } from '../../lib/rfc3339.js';
import {
  USAGE_GROUPINGS, isLlmProtocol, llmApiKeyProblem, llmProviderNameProblem, parseBudget, providerDefaults,
  type LlmBudget, type LlmProtocol, type Project, type UsageGrouping,
} from '../../resources/index.js';
import type { GatewayService } from './service.js';
import type { GatewayStore } from './store.js';

export interface GatewayRoutesConfig {
  namespace: string;
}

/** SPEC §2.1 capabilities of the gateway. */
export const CAPABILITY = {
  keys: 'project.gateway.keys.manage',
  spend: 'project.gateway.spend.read',
  logs: 'project.gateway.logs.read',
  budget: 'project.gateway.budget.set',
} as const;

const MAX_LOG_LIMIT = 1000;
const DEFAULT_LOG_LIMIT = 100;

function objectBody(body: unknown, shape: string): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest(`request body must be a JSON object ${shape}`);
  return body as Record<string, unknown>;
}

function parseProviderName(value: string): string {
  const problem = llmProviderNameProblem(value);
  if (problem) throw badRequest(problem);
  return value;
}

function parseProvider(name: string, body: unknown): { name: string; api_key: string; protocol: LlmProtocol; base_url: string } {
  const b = objectBody(body, '{ "api_key": "...", "base_url"?: "https://...", "protocol"?: "openai"|"anthropic" }');
  const unknown = Object.keys(b).filter((k) => !['api_key', 'base_url', 'protocol'].includes(k));
  if (unknown.length > 0) throw badRequest(`unknown field(s): ${unknown.join(', ')} (expected api_key, base_url, protocol)`);
  if (typeof b.api_key !== 'string') throw badRequest('api_key is required: the provider\'s API key, as a string');
  const keyProblem = llmApiKeyProblem(b.api_key);
  if (keyProblem) throw badRequest(keyProblem);
  if (b.protocol !== undefined && !isLlmProtocol(b.protocol)) throw badRequest('protocol must be "openai" or "anthropic"');
  if (b.base_url !== undefined && typeof b.base_url !== 'string') throw badRequest('base_url must be a string URL');
  const resolved = providerDefaults(name, b.protocol as LlmProtocol | undefined, b.base_url as string | undefined);
  if ('problem' in resolved) throw badRequest(resolved.problem);
  return { name, api_key: b.api_key, ...resolved };
}

function parseSince(value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const time = parseRfc3339(value);
  if (time === null) throw badRequest(`since must be an RFC 3339 time such as 2026-01-31T00:00:00Z, got ${JSON.stringify(value.slice(0, 64))}`);
  return new Date(time);
}

function parseGrouping(value: string | undefined): UsageGrouping {
  if (value === undefined) return 'day';
  if (!(USAGE_GROUPINGS as readonly string[]).includes(value)) throw badRequest(`group_by must be one of ${USAGE_GROUPINGS.join(', ')}`);
  return value as UsageGrouping;
}

export function gatewayRoutes(service: GatewayService, store: GatewayStore, config: GatewayRoutesConfig): Router {
  const router = Router({ mergeParams: true });

  function authorized(req: Request, res: Response, need: Omit<Requirement, 'projectUid'>): string {
    const projectId = parseUuid(String((req.params as Record<string, string>).projectId), 'project id');
    requireAccess(res, { ...need, projectUid: projectId });
    return projectId;
  }

  async function project(projectId: string): Promise<Project> {
    const found = await store.findProject(config.namespace, projectId);
    if (!found) throw new ApiError(404, `project ${projectId} not found`);
    return found;
  }

  router.get('/providers', async (req, res) => {
    const projectId = authorized(req, res, { access: 'read' });
    res.json(await service.providers(await project(projectId)));
  });

  router.put('/providers/:name', async (req, res) => {
    const projectId = authorized(req, res, { access: 'write', capability: CAPABILITY.keys });
    const provider = parseProvider(parseProviderName(String(req.params.name)), req.body);
    await service.setProvider(await project(projectId), provider);
    res.status(204).end();
  });

  router.delete('/providers/:name', async (req, res) => {
    const projectId = authorized(req, res, { access: 'write', capability: CAPABILITY.keys });
    const name = parseProviderName(String(req.params.name));
    await service.removeProvider(await project(projectId), name);
    res.status(204).end();
  });

  router.get('/usage', async (req, res) => {
    const projectId = authorized(req, res, { access: 'read', capability: CAPABILITY.spend });
    const by = parseGrouping(queryString(req, 'group_by'));
    const since = parseSince(queryString(req, 'since'));
    res.json(await service.usage(await project(projectId), by, since));
  });

  router.get('/logs', async (req, res) => {
    const projectId = authorized(req, res, { access: 'read', capability: CAPABILITY.logs });
    const session = queryString(req, 'session');
    const sessionId = session === undefined ? undefined : parseUuid(session, 'session');
    const limit = parseLimit(queryString(req, 'limit'), MAX_LOG_LIMIT, DEFAULT_LOG_LIMIT);
    res.json(await service.logs(await project(projectId), limit, sessionId));
  });

  router.get('/budget', async (req, res) => {
    const projectId = authorized(req, res, { access: 'read', capability: CAPABILITY.spend });
    res.json(await service.budget(await project(projectId)));
  });

  router.put('/budget', async (req, res) => {
    const projectId = authorized(req, res, { access: 'write', capability: CAPABILITY.budget });
    const parsed = parseBudget(req.body);
    if ('problem' in parsed) throw badRequest(parsed.problem);
    const budget: LlmBudget = parsed.budget;
    res.json(await service.setBudget(await project(projectId), budget));
  });

  return router;
}
