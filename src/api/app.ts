// The express app factory: everything the API talks to comes in as arguments, so the
// composition roots (src/main) decide what is real and tests can pass a local cluster.
import express, { type Express } from 'express';
import { authenticate } from './auth.js';
import { changeRequestRoutes, type ChangeRequestService } from './change-requests/index.js';
import { errorHandler, unknownRoute } from './errors.js';
import { gitRoutes, type GitGatewayService } from './git/index.js';
import { projectRoutes, type ProjectStore } from './projects.js';
import { secretsRoutes, type ProjectSecretsService } from './secrets/index.js';
import type { TokenVerifier } from './tokens.js';

export interface ApiConfig {
  /** Namespace (account) of the projects served by this API. */
  projectNamespace: string;
  /** Largest accepted JSON body. */
  bodyLimit?: string;
}

export interface ApiDependencies {
  projects: ProjectStore;
  /** Change-request routes (SPEC §4.1); absent: not served. */
  changeRequests?: ChangeRequestService;
  /** Project secrets routes (SPEC §2.4); absent: not served. */
  secrets?: ProjectSecretsService;
  /** Git gateway and clone credential (SPEC §4.4); absent: not served. */
  gitGateway?: GitGatewayService;
  verifyToken: TokenVerifier;
  /** True once the informers the routes read from have synced. */
  isReady: () => boolean;
  config: ApiConfig;
  /** Prometheus text served at GET /metrics (outside /v1). */
  metrics?: () => string;
  log?: (message: string) => void;
}

export function createApp(deps: ApiDependencies): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');

  app.get('/healthz', (_req, res) => { res.json({ status: 'ok' }); });
  app.get('/readyz', (_req, res) => {
    if (deps.isReady()) res.json({ status: 'ready' });
    else res.status(503).json({ error: 'not ready: informers have not synced yet' });
  });

  if (deps.metrics) {
    const metrics = deps.metrics;
    app.get('/metrics', (_req, res) => { res.type('text/plain; version=0.0.4').send(metrics()); });
  }

  if (deps.gitGateway) {
    // its own auth (sandbox token, clone credential) and raw bodies: before the bearer router
    app.use('/v1/projects/:projectId/git', gitRoutes(deps.gitGateway, { namespace: deps.config.projectNamespace }));
  }

  const v1 = express.Router();
  // Authenticate before parsing a body: an anonymous caller learns nothing but 401.
  v1.use(authenticate(deps.verifyToken));
  v1.use(express.json({ limit: deps.config.bodyLimit ?? '1mb' }));
  if (deps.changeRequests) {
    v1.use('/projects/:projectId/change-requests', changeRequestRoutes(deps.changeRequests, { namespace: deps.config.projectNamespace }));
  }
  if (deps.secrets) {
    v1.use('/projects/:projectId/secrets', secretsRoutes(deps.secrets, { namespace: deps.config.projectNamespace }));
  }
  v1.use('/projects', projectRoutes(deps.projects, { namespace: deps.config.projectNamespace }));
  app.use('/v1', v1);

  app.use(unknownRoute);
  app.use(errorHandler({ log: deps.log }));
  return app;
}
