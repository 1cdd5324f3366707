// The node simulator set up to run svc sandbox Pods (tests and `svc dev --provider kubernetes`):
// the sandbox image's entrypoint is played by this machine's svc-agent, and its ENV by what the
// Dockerfile sets (images/sandbox/Dockerfile). Only the sandbox image is known; any other image
// fails to "pull", as it would on a node that cannot reach its registry. Under svc dev the node is
// isolated: each pod jailed as its securityContext says (docs/sandboxes.md).
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import type { Jail } from '../lib/jail/index.js';
import type { ClusterAccess } from '../localcluster/client.js';
import { startNodeSimulator, type ImageConfig, type NodeSimulator } from '../localcluster/node/index.js';
import { ENTRYPOINT } from '../sandbox/kubernetes/index.js';
import { LABEL_SANDBOX } from '../resources/index.js';
import { SANDBOX_STOP_GRACE_MS } from '../lib/sandbox-stop.js';
import { shellQuote } from '../lib/shell-quote.js';

export interface SandboxNodeOptions {
  cluster: ClusterAccess;
  dataDir: string;
  /** How svc-agent runs here, e.g. [node, <repo>/bin/svc-agent.js]. */
  agentCommand: string[];
  /** How the `svc` CLI runs here: put on the sandbox PATH as `svc`, as the image has it. */
  svcCommand?: string[];
  namespace?: string;
  restartBackoffMs?: number;
  /** Pods jailed (svc dev), refused with a reason (isolation unavailable), or plain local processes ('none'). */
  isolation: { jail: Jail } | { unavailable: string } | 'none';
  log?: (line: string) => void;
}

/** An image reference the simulator plays as the sandbox image: any tag or digest of a repository named svc-sandbox. */
export function isSandboxImage(ref: string): boolean {
  const repository = ref.replace(/@.*$/, '').replace(/:[^/:]+$/, '');
  return repository === 'svc-sandbox' || repository.endsWith('/svc-sandbox');
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export async function startSandboxNode(options: SandboxNodeOptions): Promise<NodeSimulator> {
  const binDir = path.join(options.dataDir, '.bin');
  if (options.svcCommand) {
    // 755: a jailed pod (another uid) runs it as /opt/svc/bin/svc; it holds no secret
    await mkdir(binDir, { recursive: true, mode: 0o755 });
    await chmod(binDir, 0o755);
    const quoted = options.svcCommand.map(shellQuote).join(' ');
    await writeFile(path.join(binDir, 'svc'), `#!/bin/sh\nexec ${quoted} "$@"\n`, { mode: 0o755 });
  }
  const isolation = options.isolation === 'none' ? undefined : options.isolation;
  // jailed, the image's /opt/svc/bin holds the svc CLI (a jail shows nothing of the data directory)
  const svcDir = isolation ? '/opt/svc/bin' : binDir;
  const image: ImageConfig = {
    entrypoint: [ENTRYPOINT],
    workingDir: '/workspace',
    ...(options.svcCommand ? { files: [{ source: binDir, target: '/opt/svc/bin' }] } : {}),
    env: {
      PATH: [...(options.svcCommand ? [svcDir] : []), path.dirname(process.execPath), process.env.PATH ?? '/usr/bin:/bin'].join(path.delimiter),
      HOME: '/opt/svc/home',
      SVC_WORKSPACE: '/workspace',
      SVC_ENGINE_HOME: '/opt/svc/home',
      SVC_SERVICE_HOST: '0.0.0.0',
      SVC_SERVICE_PORT: '8000',
      SVC_SANDBOX_OWN_NETWORK: '1',
      ...(process.env.LANG ? { LANG: process.env.LANG } : {}),
    },
  };
  return startNodeSimulator({
    cluster: options.cluster,
    labelSelector: LABEL_SANDBOX,
    namespace: options.namespace,
    dataDir: options.dataDir,
    images: (ref) => (isSandboxImage(ref) ? image : undefined),
    commands: { [ENTRYPOINT]: options.agentCommand, '/usr/local/bin/svc-agent': options.agentCommand },
    isolation,
    // unjailed, no network namespace: the daemon listens on the pod's own address, its engine on a free port
    // and its /proxy reaches only its own programs' ports (daemon/own-ports.ts)
    podEnv: async ({ ip }) => ({ SVC_SERVICE_HOST: ip, SVC_ENGINE_PORT: String(await freePort()), SVC_SANDBOX_OWN_NETWORK: '0' }),
    restartBackoffMs: options.restartBackoffMs,
    // a sandbox Pod's own grace (its stop checkpoint), as a kubelet gives it: not the simulator's shorter cap
    killGraceMs: SANDBOX_STOP_GRACE_MS,
    log: options.log,
  });
}
