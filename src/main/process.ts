// What every composition root needs: settings from the environment, the cluster connection,
// and a clean stop on SIGINT/SIGTERM/SIGHUP.
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadClusterConfig, type ClusterConfig } from '../kube/index.js';
import { logLine } from '../lib/log.js';

export function envString(name: string, fallback?: string): string {
  const value = process.env[name]?.trim();
  if (value) return value;
  if (fallback !== undefined) return fallback;
  throw new Error(`${name} is not set`);
}

const KUBECONFIG_HINT = "set KUBECONFIG to the cluster's (under svc dev: source <data dir>/env, which sets it to <data dir>/kubeconfig)";

/** No kubeconfig to be found: what to set, instead of the client's guess (http://localhost:8080) or a bare ENOENT. */
export class NoKubeConfigError extends Error {
  constructor(what: string) {
    super(`no kubeconfig: ${what}; ${KUBECONFIG_HINT}`);
    this.name = 'NoKubeConfigError';
  }
}

/** KUBECONFIG when set, the pod's service account inside a cluster, else the default chain (~/.kube/config). */
export function clusterConfigFromEnv(): ClusterConfig {
  const file = process.env.KUBECONFIG?.trim();
  if (file) {
    if (!existsSync(file)) throw new NoKubeConfigError(`KUBECONFIG is ${file}, which does not exist`);
    return loadClusterConfig({ file });
  }
  if (process.env.KUBERNETES_SERVICE_HOST && existsSync('/var/run/secrets/kubernetes.io/serviceaccount/token')) return loadClusterConfig({ inCluster: true });
  const defaultFile = path.join(os.homedir(), '.kube', 'config');
  if (!existsSync(defaultFile)) throw new NoKubeConfigError(`KUBECONFIG is not set and ${defaultFile} does not exist`);
  return loadClusterConfig({ default: true });
}

/**
 * Runs `stop` once on SIGINT/SIGTERM/SIGHUP, then exits (0, or 1 when stopping failed). SIGHUP too:
 * a terminal that closes sends it to svc dev's whole group, these processes included.
 */
export function stopOnSignal(name: string, stop: () => Promise<void>): void {
  let stopping = false;
  const handler = (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`${logLine('info', `${signal}, stopping`, { component: name })}\n`);
    stop().then(
      () => process.exit(0),
      (error: unknown) => { process.stderr.write(`${logLine('error', `stop failed: ${String(error)}`, { component: name })}\n`); process.exit(1); },
    );
  };
  process.on('SIGINT', () => handler('SIGINT'));
  process.on('SIGTERM', () => handler('SIGTERM'));
  process.on('SIGHUP', () => handler('SIGHUP'));
}

/** The setting by which svc dev gives a child its stdin as a pipe that ends when svc dev does. */
export const EXIT_WITH_PARENT_ENV = 'SVC_EXIT_WITH_PARENT';

/**
 * With SVC_EXIT_WITH_PARENT=1 (svc dev's children): the end of stdin means svc dev is gone, even
 * by `kill -9`, and this process exits at once, as in a crash of the whole (its sandboxes are left
 * for the next operator to adopt). Without it a child outlived its parent until a log line met the
 * closed pipe, seconds later, holding its port and the Lease meanwhile.
 */
export function exitWithParent(name: string): void {
  if (process.env[EXIT_WITH_PARENT_ENV] !== '1') return;
  const gone = () => {
    process.stderr.write(`${logLine('error', 'svc dev is gone (its pipe closed): exiting', { component: name })}\n`);
    process.exit(1);
  };
  process.stdin.once('end', gone);
  process.stdin.once('error', gone);
  process.stdin.resume();
}

export function fatal(name: string): (error: unknown) => never {
  return (error) => {
    process.stderr.write(`${logLine('error', error instanceof Error ? error.message : String(error), { component: name })}\n`);
    process.exit(1);
  };
}
