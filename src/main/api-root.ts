// Composition root of the API, run by its entry `node dist/src/main/api.js` (entry.ts). Settings (env): KUBECONFIG (else
// in-cluster), SVC_NAMESPACE (token Secrets), SVC_PROJECT_NAMESPACE (default: default),
// SVC_HTTP_PORT (default 8080; 0 = any), SVC_HTTP_HOST (default 0.0.0.0), SVC_HTTP_SANDBOX_HOST
// (svc dev: also listen where isolated sandboxes reach the host), SVC_GIT_MAX_PUSH_BYTES
// (the git gateway's largest push, default 512 MiB; docs/git-gateway.md). Triggers (docs/triggers.md):
// SVC_WEBHOOK_BODY_LIMIT_BYTES (default 1048576), SVC_TRIGGER_QUEUE_DEPTH (default 100). Model gateway
// (docs/gateway.md): SVC_LLM_MAX_REQUEST_BYTES (33554432), SVC_LLM_USAGE_RETENTION_DAYS (90),
// SVC_LLM_USAGE_MAX_RECORDS (50000).
// SVC_GIT_SPAWN_WORKERS: threads that start git processes (default 2; 0 = the main thread).
import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ChangeRequestService, kubeChangeRequestStore } from '../api/change-requests/index.js';
import { createApp } from '../api/app.js';
import { BudgetHints, GatewayService, UsageRecorder, kubeGatewayStore } from '../api/gateway/index.js';
import { GitGatewayService, kubeGitGatewayStore, maxPushBytesFromEnv } from '../api/git/index.js';
import { LlmRelay } from '../api/llm/index.js';
import { ProjectSecretsService, kubeProjectSecretsStore } from '../api/secrets/index.js';
import { kubeProjectStore, kubeTokenSecretReader } from '../api/kube-store.js';
import { kubeSessionCredentialReader, sessionTokenCheck } from '../api/session-credentials.js';
import { kubeSessionStore, SessionService } from '../api/sessions/index.js';
import { kubeSandboxEventStore, SandboxEventService } from '../api/sandbox/index.js';
import { secretTokenVerifier } from '../api/tokens.js';
import { kubeTokenStore, kubeTokenToucher, TokenService } from '../api/tokens/index.js';
import { TriggerService, kubeTriggerStore } from '../api/triggers/index.js';
import { DEFAULT_PATCH_LIMITS, useGitSpawnWorkers } from '../git/index.js';
import { KubeClient } from '../kube/index.js';
import { createLogger } from '../lib/log.js';
import { defaultSessionCap, PROJECT, type Project } from '../resources/index.js';
import { hostAllowed, isLoopbackBinding } from '../lib/loopback-host.js';
import { cutStalledBodies, stallServerOptions } from '../lib/http-stall.js';
import { enableProcessMetrics, forgetLlmProject, metricsText } from '../lib/metrics.js';
import { mirrorPruner } from './mirror-pruner.js';
import { replicaHeartbeat } from './replica-lease.js';
import { envInt } from '../lib/env-int.js';
import { clusterConfigFromEnv, envString, exitWithParent, fatal, stopOnSignal } from './process.js';

async function main(): Promise<void> {
  exitWithParent('svc api');
  const config = clusterConfigFromEnv();
  // git processes start from worker threads: a spawn would block this event loop (src/git/spawn-pool.ts)
  useGitSpawnWorkers(envInt('SVC_GIT_SPAWN_WORKERS', 2, 0));
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
  // Every route group finds a Project by uid through the same lookup (src/api/project-lookup.ts), over this cache.
  const findProject = store.findProject;
  const sessions = new SessionService({ store: kubeSessionStore(client, store.cache, { findProject }), mirrorDir, defaultCap: defaultSessionCap(process.env) });
  // This replica and this process, in merge claims and in the heartbeat Lease the ChangeRequest controller reads.
  const claimHolder = { holder: envString('SVC_POD_NAME', os.hostname()), instance: randomUUID() };
  const heartbeat = replicaHeartbeat({ client, namespace, ...claimHolder, log: (message) => logger.error(message) });
  let heartbeatStarted = false;
  const changeRequests = new ChangeRequestService({
    store: kubeChangeRequestStore(client, { findProject }),
    mirrorDir,
    mergeIdentity: { name: envString('SVC_MERGE_AUTHOR_NAME', 'svc'), email: envString('SVC_MERGE_AUTHOR_EMAIL', 'noreply@svc.dev') },
    fetchMaxAgeMs: envInt('SVC_CR_FETCH_MAX_AGE_MS', 0),
    // Merge claims name this replica (docs/change-requests.md): replicas need distinct names.
    claimHolder,
    // docs/change-requests.md "Diff limits"
    diffLimits: { maxFileBytes: envInt('SVC_DIFF_MAX_FILE_BYTES', DEFAULT_PATCH_LIMITS.maxFileBytes, 1), maxTotalBytes: envInt('SVC_DIFF_MAX_TOTAL_BYTES', DEFAULT_PATCH_LIMITS.maxTotalBytes, 1) },
  });
  // The dashboard build (dist/web, beside dist/src/main); SVC_DASHBOARD_DIR overrides it; not built: not served.
  const dashboardDir = envString('SVC_DASHBOARD_DIR', fileURLToPath(new URL('../../web', import.meta.url)));
  // Triggers read Projects, Triggers, TriggerFires and Sessions from the project store's cache (registered before it starts).
  const triggers = new TriggerService({ store: kubeTriggerStore(store.cache, { defaultCap: defaultSessionCap(process.env), findProject }) });
  // The model gateway: its own label-selected caches (Session Secrets, provider Secrets, ledgers) beside the shared one.
  const gatewayStore = kubeGatewayStore(client, store.cache, projectNamespace, { findProject });
  const recorder = new UsageRecorder({
    store: gatewayStore,
    retentionDays: envInt('SVC_LLM_USAGE_RETENTION_DAYS', 90, 1),
    maxRecords: envInt('SVC_LLM_USAGE_MAX_RECORDS', 50_000, 1000),
    log: (message) => logger.error(message),
  });
  const budgetHints = new BudgetHints();
  const gatewayService = new GatewayService(gatewayStore, recorder, budgetHints);
  const relay = new LlmRelay({
    store: gatewayStore, recorder, budgetHints, namespace: projectNamespace,
    maxRequestBytes: envInt('SVC_LLM_MAX_REQUEST_BYTES', 32 * 1024 * 1024, 1024),
    log: (message) => logger.error(message),
  });
  const app = createApp({
    dashboard: dashboardDir && existsSync(path.join(dashboardDir, 'index.html')) ? { dir: dashboardDir } : undefined,
    projects: store,
    changeRequests,
    secrets: new ProjectSecretsService(kubeProjectSecretsStore(client, { findProject })),
    gitGateway: new GitGatewayService({ store: kubeGitGatewayStore(client, { findProject }), mirrorDir, maxPushBytes: maxPushBytesFromEnv(process.env) }),
    sessions,
    // svc-agent's state events: the session and its token from the gateway store's caches
    sandboxEvents: new SandboxEventService({ store: kubeSandboxEventStore(client, gatewayStore), namespace: projectNamespace }),
    triggers,
    gateway: { service: gatewayService, store: gatewayStore, relay },
    verifyToken: secretTokenVerifier(kubeTokenSecretReader(client, namespace), {
      touch: kubeTokenToucher(client, namespace),
      // a session's CLI token dies with its session (docs/tokens.md)
      sessionTokens: sessionTokenCheck(kubeSessionCredentialReader(client, projectNamespace)),
    }),
    tokens: new TokenService(kubeTokenStore(client, namespace)),
    // ready once the caches synced and the first heartbeat was written: no request takes a merge
    // claim before it (and until then /v1 answers 503, never a wrong 404)
    isReady: () => heartbeatStarted && store.hasSynced() && gatewayStore.hasSynced(),
    config: { projectNamespace, webhookBodyLimit: envInt('SVC_WEBHOOK_BODY_LIMIT_BYTES', 1024 * 1024, 1) },
    metrics: metricsText,
    log: (message) => logger.error(message),
  });
  // Merges whose API process died are settled by the operator's ChangeRequest controller; it tells
  // this process lives by its heartbeat, written before any request can take a claim (isReady).
  // Not awaited before listening: a cluster that does not answer yet gets 503s, not refused connections.
  void heartbeat.start().then(() => { heartbeatStarted = true; });
  const host = envString('SVC_HTTP_HOST', '0.0.0.0');
  const server = await listen(app, host, envInt('SVC_HTTP_PORT', 8080));
  const { port } = server.address() as AddressInfo;
  logger.info(`svc api listening on http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port} (projects in ${projectNamespace})`, { namespace: projectNamespace });
  // SVC_HTTP_SANDBOX_HOST (svc dev, isolated sandboxes): the same API on the address sandboxes
  // reach the host at (docs/sandboxes.md), on the same port when it is free there
  const sandboxHost = process.env.SVC_HTTP_SANDBOX_HOST?.trim();
  const servers = [server];
  if (sandboxHost) {
    const sandboxApp = withoutMetrics(app);
    const forSandboxes = await listen(sandboxApp, sandboxHost, port).catch(() => listen(sandboxApp, sandboxHost, 0));
    servers.push(forSandboxes);
    logger.info(`svc api listening for sandboxes on http://${sandboxHost}:${(forSandboxes.address() as AddressInfo).port}`);
  }
  // every replica has its own mirrors: a deleted Project's goes, and at start those of Projects deleted while we were away
  const pruner = mirrorPruner(mirrorDir);
  void store.start().then(() => pruner.start({ informer: (type) => store.cache.informer(type), log: logger.with({ runnable: 'mirror-pruner' }) }));
  void gatewayStore.start();
  // the model gateway's metrics of a deleted Project go with it (unless another Project has its name)
  const projects = store.cache.informer<Project>(PROJECT);
  projects.on('delete', (gone) => {
    if (!projects.list().some((p) => p.metadata.name === gone.metadata.name)) void forgetLlmProject(gone.metadata.name!);
  });
  stopOnSignal('svc api', async () => {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => { s.close(() => resolve()); s.closeAllConnections(); })));
    await heartbeat.stop();
    pruner.stop();
    // counted usage is written before the process goes (a cluster that does not answer gets 10 s)
    await Promise.race([recorder.flush(), new Promise((resolve) => setTimeout(resolve, 10_000).unref())]);
    await gatewayStore.stop();
    await store.stop();
  });
}

/**
 * The API as sandboxes reach it: everything but `/metrics`, whose labels name every project, its
 * models and its token counts (an agent learns nothing of other projects; DESIGN §8.1 lists what
 * a sandbox may reach: REST, the git gateway, the model gateway). Matched as express matches its
 * route: in any case (`/METRICS` reached it), with a trailing slash.
 */
function withoutMetrics(app: http.RequestListener): http.RequestListener {
  return (req, res) => {
    if (/^\/metrics(?:[/?]|$)/i.test(req.url ?? '')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'not found: metrics are not served to sandboxes' }));
      return;
    }
    app(req, res);
  };
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
