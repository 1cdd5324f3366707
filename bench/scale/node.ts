// bench/scale's node: the node simulator for svc sandbox Pods (label svc.dev/sandbox, as
// `svc dev --provider kubernetes` runs it), in a process of its own so that its CPU and memory are
// measured apart from the API server's. The operator's sandboxes use a `svc-hollow-sandbox` image:
// every pod is hollow (src/localcluster/node/README.md), no process; any other image fails to pull.
// Env: SCALE_CLUSTER_URL, SCALE_CLUSTER_TOKEN, SCALE_CLUSTER_CA (a file), SCALE_NODE_DIR,
// SCALE_HOLLOW_OCTET. Prints "node ready" once watching; SIGTERM closes it.
import { readFileSync } from 'node:fs';
import { startNodeSimulator } from '../../src/localcluster/node/index.js';
import { LABEL_SANDBOX } from '../../src/resources/index.js';

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};

async function main(): Promise<void> {
  const node = await startNodeSimulator({
    cluster: { url: env('SCALE_CLUSTER_URL'), token: env('SCALE_CLUSTER_TOKEN'), ca: readFileSync(env('SCALE_CLUSTER_CA'), 'utf8') },
    labelSelector: LABEL_SANDBOX,
    dataDir: env('SCALE_NODE_DIR'),
    images: () => undefined,
    hollowAddressOctet: Number(process.env.SCALE_HOLLOW_OCTET ?? 77),
    // one line per pod would be 10,000 lines; only what went wrong
    log: (line) => { if (/fail|error|no free|not written/i.test(line)) process.stderr.write(`${line}\n`); },
  });
  process.stdout.write('node ready\n');
  let closing = false;
  const stop = () => {
    if (closing) return;
    closing = true;
    node.close().then(() => process.exit(0), (e: unknown) => { process.stderr.write(`node: ${String(e)}\n`); process.exit(1); });
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((e: unknown) => {
  process.stderr.write(`node: ${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
