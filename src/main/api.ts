// Composition root of the API: `node dist/src/main/api.js`. Settings (env): KUBECONFIG (else
// in-cluster), SVC_NAMESPACE (token Secrets), SVC_PROJECT_NAMESPACE (default: default),
// SVC_HTTP_PORT (default 8080; 0 = any), SVC_HTTP_HOST (default 0.0.0.0). Triggers (docs/triggers.md):
// SVC_WEBHOOK_BODY_LIMIT_BYTES (default 1048576), SVC_TRIGGER_QUEUE_DEPTH (default 100),
// SVC_MAX_CONCURRENT_SESSIONS (default 10).
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ChangeRequestService, kubeChangeRequestStore } from '../api/change-requests/index.js';
import { createApp } from '../api/app.js';
import { kubeProjectStore, kubeTokenSecretReader } from '../api/kube-store.js';
import { secretTokenVerifier } from '../api/tokens.js';
import { TriggerService, kubeTriggerStore } from '../api/triggers/index.js';
import { pruneMirrors } from '../git/index.js';
import { KubeClient } from '../kube/index.js';
import { clusterConfigFromEnv, envInt, envString, fatal, prometheusText, stopOnSignal } from './process.js';

async function main(): Promise<void> {
  const config = clusterConfigFromEnv();
  const namespace = envString('SVC_NAMESPACE', config.namespace);
  const projectNamespace = envString('SVC_PROJECT_NAMESPACE', 'default');
  const client = new KubeClient(config, 'svc-api');
  const store = kubeProjectStore(client, projectNamespace);
  const started = Date.now();
  // Change requests: bare mirrors in SVC_MIRROR_DIR; merge commits by SVC_MERGE_AUTHOR_NAME <SVC_MERGE_AUTHOR_EMAIL>;
  // SVC_CR_FETCH_MAX_AGE_MS trades read freshness for fewer fetches (default 0: every read is live).
  const mirrorDir = path.resolve(envString('SVC_MIRROR_DIR', path.join(os.tmpdir(), `svc-api-mirrors-${process.getuid?.() ?? 0}`)));
  const changeRequests = new ChangeRequestService({
    store: kubeChangeRequestStore(client),
    mirrorDir,
    mergeIdentity: { name: envString('SVC_MERGE_AUTHOR_NAME', 'svc'), email: envString('SVC_MERGE_AUTHOR_EMAIL', 'noreply@svc.dev') },
    fetchMaxAgeMs: envInt('SVC_CR_FETCH_MAX_AGE_MS', 0),
  });
  const triggerStore = kubeTriggerStore(client, projectNamespace);
  const app = createApp({
    projects: store,
    changeRequests,
    triggers: new TriggerService({ store: triggerStore }),
    verifyToken: secretTokenVerifier(kubeTokenSecretReader(client, namespace)),
    isReady: () => store.hasSynced() && triggerStore.hasSynced(),
    config: { projectNamespace, webhookBodyLimit: envInt('SVC_WEBHOOK_BODY_LIMIT_BYTES', 1024 * 1024, 1) },
    metrics: () => prometheusText({
      svc_api_informers_synced: { help: '1 when the project and trigger caches have synced', value: store.hasSynced() ? 1 : 0 },
      svc_api_uptime_seconds: { help: 'seconds since the process started', value: Math.round((Date.now() - started) / 1000) },
    }),
  });
  const host = envString('SVC_HTTP_HOST', '0.0.0.0');
  const server = app.listen(envInt('SVC_HTTP_PORT', 8080), host);
  await new Promise<void>((resolve, reject) => { server.once('listening', resolve); server.once('error', reject); });
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`svc api listening on http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port} (projects in ${projectNamespace})\n`);
  // a deleted Project's mirror goes, and at start those of Projects deleted while we were away
  const pruneGone = () => pruneMirrors(mirrorDir, () => store.projectUids()).catch((error: Error) => {
    process.stderr.write(`svc api: removing mirrors of deleted projects failed: ${error.message}\n`);
  });
  store.onProjectDeleted(() => void pruneGone());
  void store.start().then(pruneGone);
  void triggerStore.start();
  stopOnSignal('svc api', async () => {
    await new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); });
    await store.stop();
    await triggerStore.stop();
  });
}

main().catch(fatal('svc api'));
