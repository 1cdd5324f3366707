// `node dist/src/localcluster/main.js --data-dir DIR [--port N] [--host H] [--authorization]`:
// prints the URL when listening; exits cleanly on SIGTERM/SIGINT. --authorization: RBAC (rbac.ts).
// Every request needs a bearer token: the admin's is in DIR/admin-token, the certificate the
// cluster serves in DIR/serving.crt.
import { parseArgs } from 'node:util';
import { startLocalCluster } from './index.js';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { 'data-dir': { type: 'string' }, port: { type: 'string', default: '0' }, host: { type: 'string', default: '127.0.0.1' }, authorization: { type: 'boolean', default: false } },
  });
  if (!values['data-dir']) {
    process.stderr.write('usage: localcluster --data-dir DIR [--port N] [--host H] [--authorization]\n');
    process.exit(2);
  }
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`localcluster: invalid --port ${values.port}\n`);
    process.exit(2);
  }
  const cluster = await startLocalCluster({ dataDir: values['data-dir'], port, host: values.host, authorization: values.authorization });
  process.stdout.write(`${cluster.url}\n`);
  let closing = false;
  const stop = () => {
    if (closing) return;
    closing = true;
    cluster.close().then(() => process.exit(0), (e: unknown) => { process.stderr.write(`localcluster: ${String(e)}\n`); process.exit(1); });
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((e: unknown) => {
  process.stderr.write(`localcluster: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
