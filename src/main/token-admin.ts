// `svc tokens` for a cluster admin: the token Secrets written directly with a kubeconfig (the
// same store the API verifies against), so no API token is needed to mint the first one.
// Settings: KUBECONFIG (or the default chain), SVC_NAMESPACE (where the API reads token Secrets;
// default the kubeconfig's namespace), SVC_PROJECT_NAMESPACE (where projects live; default the same).
import { randomUUID } from 'node:crypto';
import { capabilitiesProblem, expiryFrom, kubeTokenStore, serializeToken, TokenService, tokenNameProblem, type SerializedToken } from '../api/tokens/index.js';
import { KubeClient } from '../kube/index.js';
import { PROJECT, type Project } from '../resources/index.js';
import { clusterConfigFromEnv } from './process.js';
export { NoKubeConfigError } from './process.js';

export interface TokenAdminOptions {
  /** Namespace of the token Secrets (the API's SVC_NAMESPACE). */
  namespace?: string;
  /** Namespace of the projects `--project` names. */
  projectNamespace?: string;
}

export interface CreateTokenOptions {
  name: string;
  access: 'read' | 'write';
  /** A Project's name or uid; absent = every project. */
  project?: string;
  capabilities: string[];
  /** A duration such as 30d; absent = never. */
  expires?: string;
  /** The user the token acts as; default a new user id. */
  userId?: string;
}

/** A failure the admin can fix: printed as `svc: <message>`, exit 1. */
export class TokenAdminError extends Error {}

export interface TokenView extends SerializedToken { project: string | null }

export class TokenAdmin {
  private readonly client: KubeClient;
  readonly namespace: string;
  readonly projectNamespace: string;
  private readonly service: TokenService;

  constructor(options: TokenAdminOptions = {}) {
    const config = clusterConfigFromEnv();
    this.client = new KubeClient(config, 'svc-tokens');
    this.namespace = options.namespace ?? process.env.SVC_NAMESPACE?.trim() ?? config.namespace;
    this.projectNamespace = options.projectNamespace ?? process.env.SVC_PROJECT_NAMESPACE?.trim() ?? this.namespace;
    this.service = new TokenService(kubeTokenStore(this.client, this.namespace));
  }

  private async projects(): Promise<Project[]> {
    return (await this.client.resource<Project>(PROJECT).list(this.projectNamespace)).items;
  }

  private async view(token: SerializedToken, projects?: Project[]): Promise<TokenView> {
    const all = projects ?? (token.project_id ? await this.projects() : []);
    const project = token.project_id ? all.find((p) => p.metadata.uid === token.project_id)?.metadata.name ?? token.project_id : null;
    return { ...token, project };
  }

  async create(options: CreateTokenOptions): Promise<{ token: TokenView; value: string }> {
    const problems = [tokenNameProblem(options.name), capabilitiesProblem(options.capabilities)].filter((p): p is string => p !== null);
    const expiry = expiryFrom({ expiresIn: options.expires }, new Date());
    if ('problem' in expiry) problems.push(expiry.problem.replace('expires_in', '--expires'));
    if (problems.length) throw new TokenAdminError(problems.join('; '));
    let projectUid: string | null = null;
    const projects = options.project ? await this.projects() : [];
    if (options.project) {
      const project = projects.find((p) => p.metadata.name === options.project || p.metadata.uid === options.project);
      if (!project) throw new TokenAdminError(`no project ${options.project} in namespace ${this.projectNamespace} (kubectl get projects -n ${this.projectNamespace}; --project-namespace picks another)`);
      projectUid = project.metadata.uid!;
    }
    const minted = await this.service.create({
      name: options.name,
      userId: options.userId ?? randomUUID(),
      access: options.access,
      projectUid,
      capabilities: [...new Set(options.capabilities)].sort(),
      expiresAt: 'expiresAt' in expiry ? expiry.expiresAt : null,
    }).catch(rethrow);
    return { token: await this.view(serializeToken(minted.info, new Date()), projects), value: minted.value };
  }

  async list(): Promise<TokenView[]> {
    const [tokens, projects] = await Promise.all([this.service.list(), this.projects()]);
    const now = new Date();
    return Promise.all(tokens.map((info) => this.view(serializeToken(info, now), projects)));
  }

  async revoke(name: string): Promise<void> {
    const info = await this.service.findByName(name);
    if (!info) throw new TokenAdminError(`no token named ${name} in namespace ${this.namespace} (svc tokens ls lists them)`);
    await this.service.revoke(info);
  }
}

function rethrow(error: unknown): never {
  // the service's 409 (name taken) is the admin's to fix
  if (error instanceof Error && (error as { status?: number }).status === 409) throw new TokenAdminError(error.message);
  throw error;
}
