// The jail of local sandboxes (process provider, node simulator; docs/sandboxes.md): they may
// reach the API's port at the gateway address (svc dev makes the API listen there) and the
// --sandbox-host-port ports there (SVC_SANDBOX_HOST_PORTS), see the svc package read-only and the
// --sandbox-mount paths (SVC_SANDBOX_MOUNTS). No Kubernetes imports: `svc dev` (in the CLI
// bundle) uses it too.
import { Jail, mountsFromEnv, packageToolchain } from '../lib/jail/index.js';

export function sandboxJail(apiUrl: string, packageRoot: string, env: NodeJS.ProcessEnv = process.env): Jail {
  const url = new URL(apiUrl);
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  return new Jail({ apiPorts: [port, ...hostPortsFromEnv(env.SVC_SANDBOX_HOST_PORTS)], toolchain: packageToolchain(packageRoot), mounts: mountsFromEnv(env.SVC_SANDBOX_MOUNTS) });
}

/** SVC_SANDBOX_HOST_PORTS: `8081,11434`. */
export function hostPortsFromEnv(raw: string | undefined): number[] {
  const ports = (raw ?? '').split(',').map((p) => p.trim()).filter(Boolean).map(Number);
  if (ports.some((p) => !Number.isInteger(p) || p < 1 || p > 65535)) throw new Error(`SVC_SANDBOX_HOST_PORTS must be ports 1-65535 separated by commas, got ${JSON.stringify(raw)}`);
  return ports;
}
