// The jail of local sandboxes (process provider, node simulator; docs/sandboxes.md): they may
// reach the API's port at the gateway address (svc dev makes the API listen there), see the svc
// package read-only and the --sandbox-mount paths (SVC_SANDBOX_MOUNTS). No Kubernetes imports:
// `svc dev` (in the CLI bundle) uses it too.
import { Jail, mountsFromEnv, packageToolchain } from '../lib/jail/index.js';

export function sandboxJail(apiUrl: string, packageRoot: string, env: NodeJS.ProcessEnv = process.env): Jail {
  const url = new URL(apiUrl);
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  return new Jail({ apiPorts: [port], toolchain: packageToolchain(packageRoot), mounts: mountsFromEnv(env.SVC_SANDBOX_MOUNTS) });
}
