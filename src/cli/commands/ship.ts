// `svc ship`: pre-flight, push the session branch, open (or show) its change request (SPEC §1
// agent mandate). `--dry-run` runs only the pre-flight.
import type { Command } from 'commander';
import { examples } from '../output.js';
import { PATH_ARGUMENT_HELP } from './manifest.js';

export function registerShipCommand(program: Command): void {
  program
    .command('ship')
    .description('ship the session branch: the pre-flight manifest validation (the change-request merge gate), git push origin HEAD, then open a change request for the branch (or show the one already open)')
    .argument('[path]', PATH_ARGUMENT_HELP, '.')
    .option('--title <text>', 'title of the change request (default: the subject of the last commit)')
    .option('--description <text>', 'description of the change request')
    .option('--project <id>', 'project id or name (default: SVC_PROJECT_ID, else the linked project)')
    .option('--dry-run', 'validate the manifest and stop')
    .option('--json', 'print one JSON document: with --dry-run { valid, file, version, issues }, else { change_request, created }')
    .addHelpText('after', examples([
      ['svc ship --title "Add login"', 'inside a session: check, push, open the change request'],
      ['svc ship --dry-run', 'pre-flight of the current directory'],
      ['svc ship --dry-run ../repo --json', 'pre-flight of another checkout, as JSON'],
    ]) + '\nThe head branch is SVC_BRANCH_NAME (or SVC_HEAD_REF), else the checked-out branch; the session is SVC_SESSION_ID.\n' +
      'Exit status: 0 shipped (or --dry-run passed), 1 the pre-flight, the push or the API failed, 2 usage error.\n')
    .action(async (path: string, options: { dryRun?: boolean; json?: boolean; title?: string; description?: string; project?: string }) => {
      if (options.dryRun) {
        const { shipDryRunCommand } = await import('../manifest-actions.js');
        shipDryRunCommand(path, options);
        return;
      }
      const { shipCommand } = await import('../ship-action.js');
      await shipCommand(path, options);
    });
}
