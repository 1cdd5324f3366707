// The embedded Kubernetes-compatible API server (DESIGN.md §6). See README.md for its limits.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Cluster } from './cluster.js';
import { createHandler } from './server.js';

export interface LocalClusterOptions {
  dataDir: string;
  /** 0 = an ephemeral port */
  port?: number;
  /** default 127.0.0.1 */
  host?: string;
  /** How often a watch with allowWatchBookmarks=true gets a BOOKMARK (default 30 s). */
  bookmarkIntervalMs?: number;
  /** Watch events kept for replay from a resourceVersion; older ones get 410 (default 10,000). */
  watchHistory?: number;
}

export interface LocalCluster {
  /** http://127.0.0.1:PORT */
  url: string;
  port: number;
  close(): Promise<void>;
}

export async function startLocalCluster(opts: LocalClusterOptions): Promise<LocalCluster> {
  const cluster = await Cluster.open(opts.dataDir, opts.watchHistory);
  const host = opts.host ?? '127.0.0.1';
  const server = http.createServer(createHandler(cluster, { bookmarkIntervalMs: opts.bookmarkIntervalMs ?? 30_000, boundAddress: host }));
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${urlHost}:${port}`,
    port,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
      await cluster.close();
    },
  };
}

/** A kubeconfig for the local cluster (plain http: `insecure-skip-tls-verify: true`). Any token is accepted. */
export function kubeconfigYaml(url: string, opts: { user?: string; token?: string; namespace?: string; context?: string } = {}): string {
  const context = opts.context ?? 'svc-local';
  const user = opts.user ?? 'svc-local-user';
  // JSON strings are valid YAML double-quoted scalars: no escaping surprises.
  const q = JSON.stringify;
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: ${q(context)}`,
    '  cluster:',
    `    server: ${q(url)}`,
    '    insecure-skip-tls-verify: true',
    'users:',
    `- name: ${q(user)}`,
    '  user:',
    `    token: ${q(opts.token ?? 'svc-local-token')}`,
    'contexts:',
    `- name: ${q(context)}`,
    '  context:',
    `    cluster: ${q(context)}`,
    `    user: ${q(user)}`,
    `    namespace: ${q(opts.namespace ?? 'default')}`,
    `current-context: ${q(context)}`,
    '',
  ].join('\n');
}
