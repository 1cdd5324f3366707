// `svc dev [--data-dir DIR] [--api-port N] [--kube-port N]`: the whole system on this machine
// (docs/dev.md). Runs until SIGINT/SIGTERM, then stops every part cleanly.
import type { Command } from 'commander';
import { CliError, EXIT } from '../output.js';

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new CliError(`invalid port ${JSON.stringify(value)}: expected 0-65535 (0 = any free port)`);
  return n;
}

export function registerDevCommand(program: Command): void {
  program
    .command('dev')
    .description('run the local cluster, the CRDs, the operator and the API on this machine')
    .option('--data-dir <dir>', 'where the cluster state, kubeconfig and env are kept', '.svc-dev')
    .option('--api-port <n>', 'port of the REST API (0 = any free port)', port, 8080)
    .option('--kube-port <n>', 'port of the local Kubernetes API (0 = any free port)', port, 6443)
    .action(async (opts: { dataDir: string; apiPort: number; kubePort: number }) => {
      const { runDev } = await import('../../main/dev.js');
      const dev = await runDev({ dataDir: opts.dataDir, apiPort: opts.apiPort, kubePort: opts.kubePort }).catch((error: unknown) => {
        // e.g. a port in use, or a data dir that cannot be written
        throw new CliError(`svc dev could not start: ${error instanceof Error ? error.message : String(error)}`, EXIT.invalid);
      });
      let stopping = false;
      const stop = async (why: string, code: number) => {
        if (stopping) return;
        stopping = true;
        process.stdout.write(`svc dev: ${why}, stopping...\n`);
        await dev.stop();
        process.stdout.write('svc dev: stopped\n');
        process.exit(code);
      };
      process.on('SIGINT', () => void stop('interrupted', 0));
      process.on('SIGTERM', () => void stop('terminated', 0));
      void dev.failed.then((message) => stop(message, 1));
    });
}
