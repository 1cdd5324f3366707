// The jail of local sandboxes (process provider, node simulator; docs/sandboxes.md): they may
// reach the API's port at the gateway address (svc dev makes the API listen there) and the
// --sandbox-host-port ports there (SVC_SANDBOX_HOST_PORTS), see the svc package read-only and the
// --sandbox-mount paths (SVC_SANDBOX_MOUNTS), in the address range SVC_SANDBOX_SUBNET, with at
// most SVC_SANDBOX_MAX_PIDS tasks each. No Kubernetes imports: `svc dev` (in the CLI bundle) uses
// it too.
import { envInt } from '../lib/env-int.js';
import { DEFAULT_MAX_PIDS, Jail, MIN_MAX_PIDS, mountsFromEnv, packageToolchain } from '../lib/jail/index.js';

/** The jail's settings svc dev passes on to the operator (its process provider) from its environment. */
export const JAIL_SETTINGS = ['SVC_SANDBOX_SUBNET', 'SVC_SANDBOX_MAX_PIDS'] as const;

export function sandboxJail(apiUrl: string, packageRoot: string, env: NodeJS.ProcessEnv = process.env): Jail {
  const url = new URL(apiUrl);
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  return new Jail({
    apiPorts: [port, ...hostPortsFromEnv(env.SVC_SANDBOX_HOST_PORTS)], toolchain: packageToolchain(packageRoot), mounts: mountsFromEnv(env.SVC_SANDBOX_MOUNTS),
    subnet: env.SVC_SANDBOX_SUBNET?.trim() || undefined, maxPids: envInt('SVC_SANDBOX_MAX_PIDS', DEFAULT_MAX_PIDS, MIN_MAX_PIDS, undefined, env),
  });
}

/** SVC_SANDBOX_HOST_PORTS: `8081,11434`. */
export function hostPortsFromEnv(raw: string | undefined): number[] {
  const ports = (raw ?? '').split(',').map((p) => p.trim()).filter(Boolean).map(Number);
  if (ports.some((p) => !Number.isInteger(p) || p < 1 || p > 65535)) throw new Error(`SVC_SANDBOX_HOST_PORTS must be ports 1-65535 separated by commas, got ${JSON.stringify(raw)}`);
  return ports;
}
