// The embedded Kubernetes-compatible API server (DESIGN.md §6). See README.md for its limits.
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { cutStalledBodies, stallServerOptions } from '../lib/http-stall.js';
import { Cluster } from './cluster.js';
import { Authorizer } from './rbac.js';
import { createHandler } from './server.js';
import { servingCertificate } from './tls.js';

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
  /**
   * Authentication and RBAC (rbac.ts): only `adminToken` (all-powerful) and ServiceAccount
   * tokens from the TokenRequest API are accepted, and a ServiceAccount may do only what its
   * Roles and ClusterRoles grant. Default false: every request is allowed, any token accepted.
   */
  authorization?: boolean;
  /** The admin's bearer token when `authorization` is on (default: the one kubeconfigYaml writes). */
  adminToken?: string;
}

export interface LocalCluster {
  /** http://127.0.0.1:PORT (https:// with authorization) */
  url: string;
  port: number;
  close(): Promise<void>;
}

export async function startLocalCluster(opts: LocalClusterOptions): Promise<LocalCluster> {
  const cluster = await Cluster.open(opts.dataDir, opts.watchHistory);
  const host = opts.host ?? '127.0.0.1';
  const authorizer = new Authorizer(cluster, opts.authorization ?? false, [opts.adminToken ?? DEFAULT_TOKEN], opts.dataDir);
  const handler = createHandler(cluster, { bookmarkIntervalMs: opts.bookmarkIntervalMs ?? 30_000, boundAddress: host, authorizer });
  // kubectl sends tokens only over TLS: with authorization the cluster serves https
  const tls = opts.authorization ? servingCertificate(opts.dataDir) : undefined;
  const server = tls ? https.createServer({ ...tls, ...stallServerOptions() }, handler) : http.createServer(stallServerOptions(), handler);
  cutStalledBodies(server);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `${tls ? 'https' : 'http'}://${urlHost}:${port}`,
    port,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
      await cluster.close();
    },
  };
}

const DEFAULT_TOKEN = 'svc-local-token';

/**
 * A kubeconfig for the local cluster (plain http: `insecure-skip-tls-verify: true`). Any token is
 * accepted unless the cluster enforces authorization: then the admin token (the default one) or a
 * ServiceAccount token (`kubectl create token NAME`).
 */
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
    `    token: ${q(opts.token ?? DEFAULT_TOKEN)}`,
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
