// `svc ship`: shipping a project. Only the pre-flight (--dry-run) exists so far.
import type { Command } from 'commander';
import { CliError, EXIT, examples } from '../output.js';
import { PATH_ARGUMENT_HELP } from './manifest.js';

export function registerShipCommand(program: Command): void {
  program
    .command('ship')
    .description('ship the project; with --dry-run, only run the pre-flight manifest validation (the same check as the change-request merge gate)')
    .argument('[path]', PATH_ARGUMENT_HELP, '.')
    .option('--dry-run', 'validate the manifest and stop')
    .option('--json', 'with --dry-run: print one JSON document: { valid, file, version, issues }')
    .addHelpText('after', examples([
      ['svc ship --dry-run', 'pre-flight of the current directory'],
      ['svc ship --dry-run ../repo --json', 'pre-flight of another checkout, as JSON'],
    ]) + '\nExit status of --dry-run: 0 passes (also when there is no manifest), 1 the manifest is invalid, 2 usage error.\n')
    .action(async (path: string, options: { dryRun?: boolean; json?: boolean }) => {
      if (!options.dryRun) {
        throw new CliError('shipping is not implemented yet; run `svc ship --dry-run` for the pre-flight validation', EXIT.usage);
      }
      const { shipDryRunCommand } = await import('../manifest-actions.js');
      shipDryRunCommand(path, options);
    });
}
