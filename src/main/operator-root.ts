// Composition root of the operator, run by its entry `node dist/src/main/operator.js` (entry.ts). Settings (env):
// KUBECONFIG (else in-cluster), SVC_NAMESPACE (Lease namespace), SVC_POD_NAME (Lease identity),
// SVC_HTTP_PORT (health and metrics, default 8081; 0 = any), SVC_MIRROR_DIR,
// SVC_PROJECT_RESYNC_SECONDS (default 30), SVC_LEASE_DURATION_SECONDS (default 15),
// SVC_WATCH_NAMESPACE (default: all namespaces). Sessions (docs/sessions.md): SVC_SANDBOX_PROVIDER
// (process), SVC_SANDBOX_API_URL (the API the sandboxes reach, ending in /v1), SVC_SANDBOX_DIR
// (the process provider's folders), SVC_ENGINE_COMMAND, SVC_IDLE_TIMEOUT (seconds, default 1800),
// SVC_ENGINE_MAX_RESTARTS / SVC_ENGINE_RESTART_BACKOFF_MS / SVC_ENGINE_BOOT_TIMEOUT_MS (passed to svc-agent),
// SVC_SANDBOX_RESYNC_PROVISIONING_SECONDS (default 5) / SVC_SANDBOX_RESYNC_RUNNING_SECONDS (default 60): how often the
// Session and Sandbox controllers look at a sandbox without a state event from its daemon.
// SVC_START_DEADLINE_MS / SVC_START_RETRY_BACKOFF_MS / SVC_START_RETRY_MAX_BACKOFF_MS: how long the session branch push
// (here) and svc-agent's clone wait out a git host or API away.
// Triggers (docs/triggers.md): SVC_TRIGGER_SCHEDULER_INTERVAL_MS (longest scheduler sleep, default 60000),
// SVC_TRIGGER_CATCH_UP_SECONDS (default 300), SVC_TRIGGER_MAX_FAILURES (default 3), SVC_TRIGGER_FIRE_HISTORY
// (finished fires kept per trigger, default 100), SVC_SESSION_HISTORY (finished sessions a trigger started kept per
// trigger, default 0: every one),
// SVC_TRIGGER_QUEUE_DEPTH (default 100), SVC_MAX_CONCURRENT_SESSIONS (default 10). Change requests:
// SVC_MERGE_CLAIM_TIMEOUT_SECONDS (default 600). SVC_GIT_SPAWN_WORKERS (threads that start git
// processes, default 2; 0 = the main thread). SVC_GRACEFUL_SHUTDOWN_TIMEOUT_MS (default 1000): how long a stop
// waits for reconciles in flight before it ends their git processes and releases the Lease (docs/runtime.md).
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { changeRequestController } from '../../controllers/changerequest/controller.js';
import { projectController } from '../../controllers/project/controller.js';
import { sandboxController } from '../../controllers/sandbox/controller.js';
import { sessionController } from '../../controllers/session/controller.js';
import { triggerController } from '../../controllers/trigger/controller.js';
import { cronScheduler } from '../../controllers/trigger/scheduler.js';
import { triggerFireController } from '../../controllers/triggerfire/controller.js';
import { killRunningGit, useGitSpawnWorkers } from '../git/index.js';
import { KubeClient } from '../kube/index.js';
import { DEFAULT_FIRE_HISTORY, FIRE_HISTORY_ENV, SESSION_HISTORY_ENV } from '../resources/index.js';
import { Manager } from '../runtime/index.js';
import { createLogger } from '../lib/log.js';
import { DEFAULT_START_RETRY } from '../lib/start-retry.js';
import { cutStalledBodies, stallServerOptions } from '../lib/http-stall.js';
import { enableProcessMetrics, metricsText, operatorMetrics, schedulerMetrics } from '../lib/metrics.js';
import { mirrorPruner } from './mirror-pruner.js';
import { objectMetrics } from './operator-metrics.js';
import { envInt } from '../lib/env-int.js';
import { clusterConfigFromEnv, envString, exitWithParent, fatal, stopOnSignal } from './process.js';
import { sandboxSettingsFromEnv } from './sandboxes.js';
import { DEFAULT_SANDBOX_RESYNC, SharedHealthReads } from '../sandbox/index.js';

export const LEASE_NAME = 'svc-operator';

async function main(): Promise<void> {
  exitWithParent('svc operator');
  const config = clusterConfigFromEnv();
  // git processes start from worker threads: a spawn would block this event loop (src/git/spawn-pool.ts)
  useGitSpawnWorkers(envInt('SVC_GIT_SPAWN_WORKERS', 2, 0));
  const client = new KubeClient(config, 'svc-operator');
  const identity = envString('SVC_POD_NAME', `${os.hostname()}-${process.pid}`);
  const leaseDurationMs = envInt('SVC_LEASE_DURATION_SECONDS', 15, 2) * 1000;
  const log = (line: string) => process.stdout.write(`${line}\n`);
  const logger = createLogger(log, { fields: { component: 'operator' } });
  enableProcessMetrics();
  const metrics = operatorMetrics();
  const manager = new Manager({
    client,
    namespace: process.env.SVC_WATCH_NAMESPACE?.trim() || undefined,
    leaderElection: {
      namespace: envString('SVC_NAMESPACE', config.namespace),
      name: LEASE_NAME,
      identity,
      leaseDurationMs,
      renewIntervalMs: Math.max(500, Math.floor(leaseDurationMs / 3)),
      retryIntervalMs: Math.max(500, Math.floor(leaseDurationMs / 5)),
    },
    // Short: a reconcile cut anywhere is redone by the next leader, which should lead within 2 s.
    gracefulShutdownTimeoutMs: envInt('SVC_GRACEFUL_SHUTDOWN_TIMEOUT_MS', 1000, 0),
    abandon: async () => {
      const killed = await killRunningGit();
      if (killed > 0) logger.warn(`ended ${killed} git process${killed === 1 ? '' : 'es'} still running`);
    },
    log,
  });
  const mirrorDir = path.resolve(envString('SVC_MIRROR_DIR', path.join(os.tmpdir(), 'svc-mirrors')));
  manager.add(projectController({ mirrorDir, resyncMs: envInt('SVC_PROJECT_RESYNC_SECONDS', 30, 1) * 1000 }));
  manager.addRunnable(mirrorPruner(mirrorDir));
  const sandboxes = await sandboxSettingsFromEnv(client);
  // the safety net under the daemons' state events (docs/sessions.md "Events, not polling")
  const resync = {
    provisioningMs: envInt('SVC_SANDBOX_RESYNC_PROVISIONING_SECONDS', DEFAULT_SANDBOX_RESYNC.provisioningMs / 1000, 1) * 1000,
    runningMs: envInt('SVC_SANDBOX_RESYNC_RUNNING_SECONDS', DEFAULT_SANDBOX_RESYNC.runningMs / 1000, 1) * 1000,
  };
  // one daemon health read serves both controllers' reconciles of one moment
  const healthReads = new SharedHealthReads();
  manager.add(sessionController({
    mirrorDir,
    healthReads,
    apiUrl: sandboxes.apiUrl,
    repoUrl: sandboxes.repoUrl,
    provider: sandboxes.provider.name,
    tokenNamespace: envString('SVC_NAMESPACE', config.namespace),
    idleTimeoutMs: envInt('SVC_IDLE_TIMEOUT', 1800, 1) * 1000,
    resync,
    // the branch push waits out a git host away as svc-agent's clone does, with the same settings
    startRetry: {
      deadlineMs: envInt('SVC_START_DEADLINE_MS', DEFAULT_START_RETRY.deadlineMs, 1),
      backoffMs: envInt('SVC_START_RETRY_BACKOFF_MS', DEFAULT_START_RETRY.backoffMs, 1),
      maxBackoffMs: envInt('SVC_START_RETRY_MAX_BACKOFF_MS', DEFAULT_START_RETRY.maxBackoffMs, 1),
    },
  }));
  manager.add(sandboxController({ provider: sandboxes.provider, resync, healthReads }));
  // Change requests (docs/change-requests.md): merge claims left by a dead merger, deleted originating sessions, feedback delivery.
  manager.add(changeRequestController({
    mirrorDir,
    replicaNamespace: envString('SVC_NAMESPACE', config.namespace),
    claimTimeoutMs: envInt('SVC_MERGE_CLAIM_TIMEOUT_SECONDS', 600, 1) * 1000,
  }));
  const catchUpMs = envInt('SVC_TRIGGER_CATCH_UP_SECONDS', 300, 0) * 1000;
  manager.add(triggerController({ catchUpMs, maxFailures: envInt('SVC_TRIGGER_MAX_FAILURES', 3, 1), history: envInt(FIRE_HISTORY_ENV, DEFAULT_FIRE_HISTORY, 0), sessionHistory: envInt(SESSION_HISTORY_ENV, 0, 0) }));
  manager.add(triggerFireController());
  const scheduler = cronScheduler({ maxSleepMs: envInt('SVC_TRIGGER_SCHEDULER_INTERVAL_MS', 60_000, 100), catchUpMs, log });
  manager.addRunnable(scheduler);
  schedulerMetrics().setSource(() => scheduler.stats());
  manager.addRunnable(objectMetrics());
  manager.onLeadershipChange((leading) => {
    if (leading) sandboxes.lead();
    metrics.leader.set(leading ? 1 : 0);
    logger.info(`svc operator ${identity}: ${leading ? 'leading' : 'standing by'}`);
  });

  const server = http.createServer(stallServerOptions(), (req, res) => {
    const send = (status: number, type: string, body: string) => { res.writeHead(status, { 'content-type': type }); res.end(body); };
    if (req.url === '/healthz' || req.url === '/readyz') return send(200, 'application/json', JSON.stringify({ status: 'ok', leading: manager.isActive() }));
    if (req.url === '/metrics') {
      metricsText().then(({ contentType, body }) => send(200, contentType, body), (err: Error) => send(500, 'text/plain', err.message));
      return;
    }
    send(404, 'application/json', JSON.stringify({ error: 'not found' }));
  });
  const host = envString('SVC_HTTP_HOST', '0.0.0.0');
  cutStalledBodies(server);
  server.listen(envInt('SVC_HTTP_PORT', 8081), host);
  await new Promise<void>((resolve, reject) => { server.once('listening', resolve); server.once('error', reject); });
  logger.info(`svc operator ${identity}: health on port ${(server.address() as AddressInfo).port} of ${host}, waiting for Lease ${LEASE_NAME}`);
  await manager.start();
  stopOnSignal('svc operator', async () => {
    await manager.stop();
    await sandboxes.stop();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
}

main().catch(fatal('svc operator'));
