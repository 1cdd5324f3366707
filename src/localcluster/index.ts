// The embedded Kubernetes-compatible API server (DESIGN.md §6). See README.md for its limits.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import type { AddressInfo, Socket } from 'node:net';
import { cutStalledBodies, stallServerOptions } from '../lib/http-stall.js';
import { Cluster } from './cluster.js';
import { Authorizer } from './rbac.js';
import { createHandler, type PodLogs } from './server.js';
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
   * RBAC (rbac.ts): a ServiceAccount token may do only what its Roles and ClusterRoles grant.
   * Default false: every authenticated caller may do everything. Authentication itself is never
   * optional: every request needs the admin token or a ServiceAccount token (401 otherwise).
   */
  authorization?: boolean;
  /** The admin's bearer token (default: the one kept in `dataDir/admin-token`, made once at random). */
  adminToken?: string;
  /** Events not written to for this long are deleted, as kube-apiserver's --event-ttl (default 1 h). */
  eventTtlMs?: number;
  /** `pods/log` (`kubectl logs`): the node simulator's files (`podLogReader(its dataDir)`); without it every pod has none. */
  podLogs?: PodLogs;
}

export interface LocalCluster {
  /** https://127.0.0.1:PORT */
  url: string;
  port: number;
  /** The admin's bearer token (system:masters). */
  token: string;
  /** The PEM certificate the cluster serves (self-signed): trust it to reach `url`. */
  ca: string;
  close(): Promise<void>;
}

/** The admin token kept in the data dir, so that a restarted cluster accepts the same kubeconfig. */
function storedAdminToken(dataDir: string): string {
  const file = path.join(dataDir, 'admin-token');
  if (existsSync(file)) {
    const token = readFileSync(file, 'utf8').trim();
    if (token) return token;
  }
  const token = randomBytes(32).toString('base64url');
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  return token;
}

export async function startLocalCluster(opts: LocalClusterOptions): Promise<LocalCluster> {
  const cluster = await Cluster.open(opts.dataDir, opts.watchHistory);
  const host = opts.host ?? '127.0.0.1';
  const token = opts.adminToken ?? storedAdminToken(opts.dataDir);
  const authorizer = new Authorizer(cluster, opts.authorization ?? false, [token], opts.dataDir);
  const handler = createHandler(cluster, { bookmarkIntervalMs: opts.bookmarkIntervalMs ?? 30_000, boundAddress: host, authorizer, podLogs: opts.podLogs });
  // kubectl sends bearer tokens only over TLS: the cluster always serves https
  const tls = servingCertificate(opts.dataDir, host);
  const server = https.createServer({ ...tls, ...stallServerOptions() }, handler);
  cutStalledBodies(server);
  server.keepAliveTimeout = 65_000;
  // Every TCP connection, for close(): closeAllConnections() knows only those past their TLS
  // handshake, and one still in it would hold close() until the handshake times out (60 s).
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const eventTtlMs = opts.eventTtlMs ?? 3_600_000;
  const expiry = setInterval(() => void cluster.expireEvents(eventTtlMs).catch(() => undefined), Math.min(60_000, Math.max(1000, eventTtlMs / 4)));
  expiry.unref();
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `https://${urlHost}:${port}`,
    port,
    token,
    ca: tls.cert.toString('utf8'),
    async close() {
      clearInterval(expiry);
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
      await cluster.close();
    },
  };
}

/**
 * A kubeconfig for the local cluster: its URL, the certificate to trust (`ca`, else
 * `insecure-skip-tls-verify`) and a bearer token (the admin's, or a ServiceAccount's from
 * `kubectl create token NAME`).
 */
export function kubeconfigYaml(url: string, opts: { token: string; ca?: string; user?: string; namespace?: string; context?: string }): string {
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
    opts.ca ? `    certificate-authority-data: ${q(Buffer.from(opts.ca, 'utf8').toString('base64'))}` : '    insecure-skip-tls-verify: true',
    'users:',
    `- name: ${q(user)}`,
    '  user:',
    `    token: ${q(opts.token)}`,
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

/** The kubeconfig of `cluster` as its admin. */
export function adminKubeconfig(cluster: Pick<LocalCluster, 'url' | 'token' | 'ca'>, opts: { namespace?: string; context?: string } = {}): string {
  return kubeconfigYaml(cluster.url, { token: cluster.token, ca: cluster.ca, ...opts });
}
