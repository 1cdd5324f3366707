// The express app factory: everything the API talks to comes in as arguments, so the
// composition roots (src/main) decide what is real and tests can pass a local cluster.
import express, { type Express } from 'express';
import { changeRequestsGroup, type ChangeRequestService } from './change-requests/index.js';
import { dashboardGroup, type DashboardOptions } from './dashboard/index.js';
import { errorHandler, unknownRoute } from './errors.js';
import { gatewayGroup, type GatewayService, type GatewayStore } from './gateway/index.js';
import { gitGroup, type GitGatewayService } from './git/index.js';
import { llmGroup, type LlmRelay } from './llm/index.js';
import { mountGroups, type RouteGroup } from './groups.js';
import { httpMetrics } from './metrics.js';
import { meGroup } from './me/index.js';
import { projectsGroup, type ProjectStore } from './projects/index.js';
import { sandboxGroup, type SandboxEventService } from './sandbox/index.js';
import { secretsGroup, type ProjectSecretsService } from './secrets/index.js';
import { sessionsGroups, type SessionService } from './sessions/index.js';
import type { TokenVerifier } from './tokens.js';
import { tokensGroup, type TokenService } from './tokens/index.js';
import { triggersGroup, type TriggerService } from './triggers/index.js';
import { webhooksGroup } from './webhooks/index.js';

export interface ApiConfig {
  /** Namespace (account) of the projects served by this API. */
  projectNamespace: string;
  /** Largest accepted JSON body. */
  bodyLimit?: string;
  /** Largest accepted webhook body (default 1 MiB). */
  webhookBodyLimit?: string | number;
}

export interface ApiDependencies {
  projects: ProjectStore;
  /** Change-request routes (SPEC §4.1); absent: not served. */
  changeRequests?: ChangeRequestService;
  /** Project secrets routes (SPEC §2.4); absent: not served. */
  secrets?: ProjectSecretsService;
  /** Git gateway and clone credential (SPEC §4.4); absent: not served. */
  gitGateway?: GitGatewayService;
  /** Session routes and the engine proxy (issue 10); absent: not served. */
  sessions?: SessionService;
  /** The sandboxes' own routes (their daemon's state events); absent: not served. */
  sandboxEvents?: SandboxEventService;
  /** The model gateway: REST routes and the data path under /v1/llm (DESIGN §8.2); absent: not served. */
  gateway?: { service: GatewayService; store: GatewayStore; relay: LlmRelay };
  /** Trigger routes and the webhook receiver (SPEC §4.2, §4.3); absent: not served. */
  triggers?: TriggerService;
  verifyToken: TokenVerifier;
  /** Token administration (/v1/tokens, docs/tokens.md); absent: not served. */
  tokens?: TokenService;
  /** True once the informers the routes read from have synced. */
  isReady: () => boolean;
  config: ApiConfig;
  /** Prometheus exposition served at GET /metrics (outside /v1); requests are counted when set. */
  metrics?: () => Promise<{ contentType: string; body: string }>;
  log?: (message: string) => void;
  /** The web dashboard's build output, served at `/`; absent: not served. */
  dashboard?: DashboardOptions;
}

export function createApp(deps: ApiDependencies): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  if (deps.metrics) app.use(httpMetrics());

  app.get('/healthz', (_req, res) => { res.json({ status: 'ok' }); });
  app.get('/readyz', (_req, res) => {
    if (deps.isReady()) res.json({ status: 'ready' });
    else res.status(503).json({ error: 'not ready: informers have not synced yet' });
  });

  if (deps.metrics) {
    const metrics = deps.metrics;
    app.get('/metrics', (_req, res, next) => {
      metrics().then(({ contentType, body }) => { res.type(contentType).send(body); }, next);
    });
  }

  // Until the informers have synced, every /v1 route (the webhook receiver too) would read an
  // empty cache and call an existing project or trigger "not found": answer 503 instead.
  app.use('/v1', (_req, res, next) => {
    if (deps.isReady()) return next();
    res.status(503).set('Retry-After', '1').json({ error: 'not ready: the API is loading its caches; try again in a moment' });
  });

  mountGroups(app, routeGroups(deps), { verifyToken: deps.verifyToken, bodyLimit: deps.config.bodyLimit ?? '1mb' });

  app.use(unknownRoute);
  app.use(errorHandler({ log: deps.log }));
  return app;
}

/** Every route group the API serves (src/api/<group>/index.ts); mountGroups orders them by path. */
function routeGroups(deps: ApiDependencies): RouteGroup[] {
  const scope = { namespace: deps.config.projectNamespace };
  const groups = [projectsGroup(deps.projects, scope), meGroup()];
  if (deps.changeRequests) groups.push(changeRequestsGroup(deps.changeRequests, scope));
  if (deps.dashboard) groups.push(dashboardGroup(deps.dashboard));
  if (deps.secrets) groups.push(secretsGroup(deps.secrets, scope));
  if (deps.gitGateway) groups.push(gitGroup(deps.gitGateway, scope));
  if (deps.tokens) {
    const projectExists = async (uid: string) => (await deps.projects.getProject(scope.namespace, uid)) !== undefined;
    groups.push(tokensGroup({ service: deps.tokens, projectExists }));
  }
  if (deps.sessions) groups.push(...sessionsGroups(deps.sessions, scope));
  if (deps.sandboxEvents) groups.push(sandboxGroup(deps.sandboxEvents));
  if (deps.gateway) groups.push(gatewayGroup(deps.gateway.service, deps.gateway.store, scope), llmGroup(deps.gateway.relay));
  if (deps.triggers) {
    groups.push(triggersGroup(deps.triggers, scope));
    groups.push(webhooksGroup(deps.triggers, { ...scope, bodyLimit: deps.config.webhookBodyLimit }));
  }
  return groups;
}
