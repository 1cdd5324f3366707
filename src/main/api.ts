// Composition root of the API: `node dist/src/main/api.js`. Settings (env): KUBECONFIG (else
// in-cluster), SVC_NAMESPACE (token Secrets), SVC_PROJECT_NAMESPACE (default: default),
// SVC_HTTP_PORT (default 8080; 0 = any), SVC_HTTP_HOST (default 0.0.0.0), SVC_HTTP_SANDBOX_HOST
// (svc dev: also listen where isolated sandboxes reach the host). Triggers (docs/triggers.md):
// SVC_WEBHOOK_BODY_LIMIT_BYTES (default 1048576), SVC_TRIGGER_QUEUE_DEPTH (default 100).
import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ChangeRequestService, kubeChangeRequestStore } from '../api/change-requests/index.js';
import { createApp } from '../api/app.js';
import { GitGatewayService, kubeGitGatewayStore } from '../api/git/index.js';
import { ProjectSecretsService, kubeProjectSecretsStore } from '../api/secrets/index.js';
import { kubeProjectStore, kubeTokenSecretReader } from '../api/kube-store.js';
import { kubeSessionStore, SessionService } from '../api/sessions/index.js';
import { secretTokenVerifier } from '../api/tokens.js';
import { kubeTokenStore, kubeTokenToucher, TokenService } from '../api/tokens/index.js';
import { TriggerService, kubeTriggerStore } from '../api/triggers/index.js';
import { DEFAULT_PATCH_LIMITS } from '../git/index.js';
import { KubeClient } from '../kube/index.js';
import { createLogger } from '../lib/log.js';
import { defaultSessionCap } from '../resources/index.js';
import { hostAllowed, isLoopbackBinding } from '../lib/loopback-host.js';
import { cutStalledBodies, stallServerOptions } from '../lib/http-stall.js';
import { enableProcessMetrics, metricsText } from '../lib/metrics.js';
import { mirrorPruner } from './mirror-pruner.js';
import { clusterConfigFromEnv, envInt, envString, fatal, stopOnSignal } from './process.js';

async function main(): Promise<void> {
  const config = clusterConfigFromEnv();
  const namespace = envString('SVC_NAMESPACE', config.namespace);
  const projectNamespace = envString('SVC_PROJECT_NAMESPACE', 'default');
  const client = new KubeClient(config, 'svc-api');
  const store = kubeProjectStore(client, projectNamespace);
  const logger = createLogger((line) => process.stdout.write(`${line}\n`), { fields: { component: 'api' } });
  enableProcessMetrics();
  // Change requests: bare mirrors in SVC_MIRROR_DIR; merge commits by SVC_MERGE_AUTHOR_NAME <SVC_MERGE_AUTHOR_EMAIL>;
  // SVC_CR_FETCH_MAX_AGE_MS trades read freshness for fewer fetches (default 0: every read is live).
  const mirrorDir = path.resolve(envString('SVC_MIRROR_DIR', path.join(os.tmpdir(), `svc-api-mirrors-${process.getuid?.() ?? 0}`)));
  // Sessions: SVC_MAX_CONCURRENT_SESSIONS (default 10), overridden per Namespace by its annotation.
  const sessions = new SessionService({ store: kubeSessionStore(client), mirrorDir, defaultCap: defaultSessionCap(process.env) });
  const changeRequests = new ChangeRequestService({
    store: kubeChangeRequestStore(client, { cachedProject: (ns, uid) => store.getProject(ns, uid) }),
    mirrorDir,
    mergeIdentity: { name: envString('SVC_MERGE_AUTHOR_NAME', 'svc'), email: envString('SVC_MERGE_AUTHOR_EMAIL', 'noreply@svc.dev') },
    fetchMaxAgeMs: envInt('SVC_CR_FETCH_MAX_AGE_MS', 0),
    deliverFeedback: (project, sessionId, feedback) => sessions.deliverFeedback(project, sessionId, feedback),
    // Merge claims name this replica (docs/change-requests.md): replicas need distinct names.
    claimHolder: { holder: envString('SVC_POD_NAME', os.hostname()), instance: randomUUID() },
    claimTimeoutMs: envInt('SVC_MERGE_CLAIM_TIMEOUT_SECONDS', 600, 1) * 1000,
    // docs/change-requests.md "Diff limits"
    diffLimits: { maxFileBytes: envInt('SVC_DIFF_MAX_FILE_BYTES', DEFAULT_PATCH_LIMITS.maxFileBytes, 1), maxTotalBytes: envInt('SVC_DIFF_MAX_TOTAL_BYTES', DEFAULT_PATCH_LIMITS.maxTotalBytes, 1) },
  });
  // The dashboard build (dist/web, beside dist/src/main); SVC_DASHBOARD_DIR overrides it; not built: not served.
  const dashboardDir = envString('SVC_DASHBOARD_DIR', fileURLToPath(new URL('../../web', import.meta.url)));
  // Triggers read Projects, Triggers, TriggerFires and Sessions from the project store's cache (registered before it starts).
  const triggers = new TriggerService({ store: kubeTriggerStore(store.cache, { defaultCap: defaultSessionCap(process.env) }) });
  const app = createApp({
    dashboard: dashboardDir && existsSync(path.join(dashboardDir, 'index.html')) ? { dir: dashboardDir } : undefined,
    projects: store,
    changeRequests,
    secrets: new ProjectSecretsService(kubeProjectSecretsStore(client)),
    gitGateway: new GitGatewayService({ store: kubeGitGatewayStore(client), mirrorDir }),
    sessions,
    triggers,
    verifyToken: secretTokenVerifier(kubeTokenSecretReader(client, namespace), { touch: kubeTokenToucher(client, namespace) }),
    tokens: new TokenService(kubeTokenStore(client, namespace)),
    isReady: () => store.hasSynced(),
    config: { projectNamespace, webhookBodyLimit: envInt('SVC_WEBHOOK_BODY_LIMIT_BYTES', 1024 * 1024, 1) },
    metrics: metricsText,
    log: (message) => logger.error(message),
  });
  const host = envString('SVC_HTTP_HOST', '0.0.0.0');
  const server = await listen(app, host, envInt('SVC_HTTP_PORT', 8080));
  const { port } = server.address() as AddressInfo;
  logger.info(`svc api listening on http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port} (projects in ${projectNamespace})`, { namespace: projectNamespace });
  // SVC_HTTP_SANDBOX_HOST (svc dev, isolated sandboxes): the same API on the address sandboxes
  // reach the host at (docs/sandboxes.md), on the same port when it is free there
  const sandboxHost = process.env.SVC_HTTP_SANDBOX_HOST?.trim();
  const servers = [server];
  if (sandboxHost) {
    const forSandboxes = await listen(app, sandboxHost, port).catch(() => listen(app, sandboxHost, 0));
    servers.push(forSandboxes);
    logger.info(`svc api listening for sandboxes on http://${sandboxHost}:${(forSandboxes.address() as AddressInfo).port}`);
  }
  // every replica has its own mirrors: a deleted Project's goes, and at start those of Projects deleted while we were away
  const pruner = mirrorPruner(mirrorDir);
  void store.start().then(() => pruner.start({ informer: (type) => store.cache.informer(type), log: logger.with({ runnable: 'mirror-pruner' }) }));
  // Merges whose API process died: recorded (their head is in the base) or released, at start and then periodically.
  const settleClaims = () => changeRequests.settleClaims(projectNamespace).catch((error: Error) => {
    logger.error("settling merge claims failed", { error: error.message });
  });
  void settleClaims();
  const sweep = setInterval(() => void settleClaims(), envInt('SVC_MERGE_CLAIM_SWEEP_SECONDS', 60, 1) * 1000);
  sweep.unref();
  stopOnSignal('svc api', async () => {
    clearInterval(sweep);
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => { s.close(() => resolve()); s.closeAllConnections(); })));
    pruner.stop();
    await store.stop();
  });
}

/** One HTTP server of the app on host:port (stalled requests cut, docs/sandboxes.md). */
async function listen(app: http.RequestListener, host: string, port: number): Promise<http.Server> {
  const server = http.createServer(stallServerOptions(), loopbackOnly(host, app));
  cutStalledBodies(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => { server.off('error', reject); resolve(); });
  });
  return server;
}

/**
 * Bound to loopback (`svc dev`), only Host headers naming loopback reach the app: a web page
 * cannot use DNS rebinding to talk to it. A deployment (0.0.0.0 behind a Service) takes any Host.
 */
function loopbackOnly(host: string, app: http.RequestListener): http.RequestListener {
  // the sandbox address of svc dev is a private address of this machine too: the same check
  if (!isLoopbackBinding(host) && host !== process.env.SVC_HTTP_SANDBOX_HOST?.trim()) return app;
  return (req, res) => {
    if (hostAllowed(req.headers.host, host)) return app(req, res);
    res.writeHead(403, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: `Host ${JSON.stringify(req.headers.host ?? '')} is refused: this API listens on ${host} and answers only to loopback names` }));
  };
}

main().catch(fatal('svc api'));
