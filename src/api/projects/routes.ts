// Project REST routes (thin) and the pure parts behind them: request validation and the
// serialized project shape (docs/api.md).
import { Router } from 'express';
import { branchNameProblem, localRepoRefusal, remoteProblem } from '../../git/index.js';
import { API_VERSION, PROJECT } from '../../resources/constants.js';
import type { Project, Trigger } from '../../resources/index.js';
import { requireAccess } from '../auth.js';
import { canSeeProject } from '../authz.js';
import { badRequest, notFound } from '../errors.js';
import { UUID } from '../ids.js';
import type { SerializedProject, SerializedTrigger } from '../../lib/rest-shapes.js';
import { serializeProject, serializeTrigger } from './serialize.js';

export { serializeProject, serializeTrigger } from './serialize.js';

/** What the project routes need from the cluster (kube-store.ts: cached reads, client writes). */
export interface ProjectStore {
  /** Projects of one namespace (account). */
  listProjects(namespace: string): Promise<Project[]>;
  /** The Project of the namespace with this uid. */
  getProject(namespace: string, uid: string): Promise<Project | undefined>;
  /** Creates the Project; throws ApiError 409 when the name is taken. */
  createProject(project: Project): Promise<Project>;
  /** The Trigger resources the project controls. */
  triggersOf(project: Project): Promise<Trigger[]>;
  /** Deletes this Project (this uid); its controller's finalizer and garbage collection take what it owns. */
  deleteProject(project: Project): Promise<void>;
}

export interface ProjectRoutesConfig {
  /** The namespace (account) where projects are created and listed. */
  namespace: string;
}

export type { SerializedProject, SerializedTrigger };

export interface CreateProjectRequest {
  name: string;
  repo_url: string;
  default_branch: string;
  description?: string;
  /** Name of the Secret (same namespace) with the repository's credentials (docs/repositories.md). */
  credentials_secret?: string;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const CREATE_FIELDS = new Set(['name', 'repo_url', 'default_branch', 'description', 'credentials_secret']);
// a Secret's name: a DNS-1123 subdomain
const DNS_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
// Trigger resources are named `<project>-<slug>`; keeping project names short leaves room for slugs.
const MAX_NAME = 63;
const MAX_DESCRIPTION = 4096;

/** Validates a create body; throws 400 with every problem named. */
export function parseCreateProject(body: unknown): CreateProjectRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw badRequest('request body must be a JSON object with name and repo_url');
  }
  const input = body as Record<string, unknown>;
  const problems: string[] = [];
  const unknown = Object.keys(input).filter((k) => !CREATE_FIELDS.has(k));
  if (unknown.length) problems.push(`unknown field(s): ${unknown.join(', ')} (allowed: ${[...CREATE_FIELDS].join(', ')})`);
  const { name, repo_url: repoUrl, default_branch: branch = 'main', description, credentials_secret: secret } = input;
  if (typeof name !== 'string' || name === '') problems.push('name is required');
  else if (name.length > MAX_NAME || !DNS_LABEL.test(name)) {
    problems.push(`name ${JSON.stringify(name)} must be a DNS-1123 label: at most ${MAX_NAME} lower-case letters, digits and '-', starting and ending with a letter or digit`);
  }
  if (typeof repoUrl !== 'string' || repoUrl.trim() === '') problems.push('repo_url is required (a git clone URL or an absolute path)');
  // eslint-disable-next-line no-control-regex -- the point is to find control characters
  else if (/[\u0000-\u001f\u007f]/.test(repoUrl)) problems.push('repo_url must not contain control characters');
  else {
    // the same reading the controllers give it: a URL they cannot use is refused here, not accepted to fail later
    const problem = remoteProblem(repoUrl.trim());
    if (problem) problems.push(`repo_url: ${problem}`);
  }
  if (typeof branch !== 'string') problems.push('default_branch must be a string');
  else {
    const problem = branchNameProblem(branch);
    if (problem) problems.push(`default_branch ${JSON.stringify(branch)} is not a valid branch name: ${problem}`);
  }
  if (description !== undefined && typeof description !== 'string') problems.push('description must be a string');
  else if (typeof description === 'string' && description.length > MAX_DESCRIPTION) problems.push(`description is longer than ${MAX_DESCRIPTION} characters`);
  if (secret !== undefined && (typeof secret !== 'string' || !DNS_SUBDOMAIN.test(secret))) {
    problems.push(`credentials_secret ${JSON.stringify(secret)} must be the name of a Secret (a DNS-1123 subdomain: lower-case letters, digits, '-' and '.')`);
  }
  if (problems.length) throw badRequest(problems.join('; '), { problems });
  return {
    name: name as string, repo_url: (repoUrl as string).trim(), default_branch: branch as string,
    ...(description !== undefined ? { description: description as string } : {}),
    ...(secret !== undefined ? { credentials_secret: secret as string } : {}),
  };
}

export function projectResource(request: CreateProjectRequest, namespace: string): Project {
  return {
    apiVersion: API_VERSION,
    kind: PROJECT.kind,
    metadata: { name: request.name, namespace },
    spec: {
      repoUrl: request.repo_url,
      defaultBranch: request.default_branch,
      ...(request.description !== undefined ? { description: request.description } : {}),
      ...(request.credentials_secret !== undefined ? { gitCredentialsSecretRef: { name: request.credentials_secret } } : {}),
    },
  };
}

export function projectRoutes(store: ProjectStore, config: ProjectRoutesConfig): Router {
  const router = Router();

  router.post('/', async (req, res) => {
    requireAccess(res, { access: 'write', projectUid: null, unscopedOnly: true });
    const request = parseCreateProject(req.body);
    const local = localRepoRefusal(request.repo_url);
    if (local) throw badRequest(`repo_url: ${local.message}`);
    const created = await store.createProject(projectResource(request, config.namespace));
    res.status(201).json({ project: serializeProject(created) });
  });

  const withTriggers = async (project: Project) => serializeProject(project, (await store.triggersOf(project)).map(serializeTrigger));

  router.get('/', async (_req, res) => {
    const principal = requireAccess(res, { access: 'read', projectUid: null });
    const visible = (await store.listProjects(config.namespace)).filter((p) => canSeeProject(principal, p.metadata.uid ?? ''));
    visible.sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
    res.json({ projects: await Promise.all(visible.map(withTriggers)) });
  });

  router.get('/:projectId', async (req, res) => {
    const id = req.params.projectId;
    if (!UUID.test(id)) throw badRequest(`project id ${JSON.stringify(id)} is not a UUID`);
    requireAccess(res, { access: 'read', projectUid: id.toLowerCase() });
    const project = await store.getProject(config.namespace, id.toLowerCase());
    if (!project) throw notFound(`project ${id} not found`);
    res.json({ project: await withTriggers(project) });
  });

  // Deleting a project is the account's act, as creating one is: a token scoped to a project (a session's) may not.
  router.delete('/:projectId', async (req, res) => {
    const id = req.params.projectId;
    if (!UUID.test(id)) throw badRequest(`project id ${JSON.stringify(id)} is not a UUID`);
    requireAccess(res, {
      access: 'write', projectUid: id.toLowerCase(), capability: 'project.delete',
      unscopedOnly: 'a token scoped to a project cannot delete a project (a session\'s token must not remove its own): use an unscoped token',
    });
    const project = await store.getProject(config.namespace, id.toLowerCase());
    if (!project) throw notFound(`project ${id} not found`);
    await store.deleteProject(project);
    res.status(204).end();
  });

  return router;
}

