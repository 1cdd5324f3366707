// The express app factory: everything the API talks to comes in as arguments, so the
// composition roots (src/main) decide what is real and tests can pass a local cluster.
import express, { type Express } from 'express';
import { authenticate } from './auth.js';
import { changeRequestRoutes, type ChangeRequestService } from './change-requests/index.js';
import { errorHandler, unknownRoute } from './errors.js';
import { projectRoutes, type ProjectStore } from './projects.js';
import type { TokenVerifier } from './tokens.js';
import { triggerRoutes, type TriggerService } from './triggers/index.js';
import { webhookRoutes } from './webhooks/index.js';

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
  /** Trigger routes and the webhook receiver (SPEC §4.2, §4.3); absent: not served. */
  triggers?: TriggerService;
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

  // Webhooks authenticate with the trigger's secret over the raw body: before bearer auth and JSON parsing.
  if (deps.triggers) {
    app.use('/v1/webhooks', webhookRoutes(deps.triggers, { namespace: deps.config.projectNamespace, bodyLimit: deps.config.webhookBodyLimit }));
  }

  const v1 = express.Router();
  // Authenticate before parsing a body: an anonymous caller learns nothing but 401.
  v1.use(authenticate(deps.verifyToken));
  v1.use(express.json({ limit: deps.config.bodyLimit ?? '1mb' }));
  if (deps.changeRequests) {
    v1.use('/projects/:projectId/change-requests', changeRequestRoutes(deps.changeRequests, { namespace: deps.config.projectNamespace }));
  }
  if (deps.triggers) {
    v1.use('/projects/:projectId/triggers', triggerRoutes(deps.triggers, { namespace: deps.config.projectNamespace }));
  }
  v1.use('/projects', projectRoutes(deps.projects, { namespace: deps.config.projectNamespace }));
  app.use('/v1', v1);

  app.use(unknownRoute);
  app.use(errorHandler({ log: deps.log }));
  return app;
}
