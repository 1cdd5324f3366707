// `svc manifest ...`: checks of the project manifest.
import type { Command } from 'commander';
import { examples } from '../output.js';

export const PATH_ARGUMENT_HELP = 'a manifest file, or a repository directory where svc.yaml, then svc.toml, is looked for';

export function registerManifestCommands(program: Command): void {
  const manifest = program
    .command('manifest')
    .description('check the project manifest (svc.yaml, legacy svc.toml)')
    .addHelpText('after', examples([['svc manifest validate --json', 'validate ./svc.yaml (or ./svc.toml) and print JSON']]));
  manifest
    .command('validate')
    .description('validate a manifest against the schema; in a directory, also the agent definition files and skills')
    .argument('[path]', PATH_ARGUMENT_HELP, '.')
    .option('--json', 'print one JSON document: { valid, file, version, issues, agent_issues }')
    .addHelpText('after', examples([
      ['svc manifest validate', 'the manifest of the current directory'],
      ['svc manifest validate ../repo --json', 'another checkout, as JSON'],
      ['svc manifest validate legacy/svc.toml', 'one file (the encoding follows the extension)'],
    ]) + '\nExit status: 0 valid, 1 invalid (including syntax errors), 2 usage error or unreadable path.\n')
    .action(async (path: string, options: { json?: boolean }) => {
      const { validateCommand } = await import('../manifest-actions.js');
      validateCommand(path, options);
    });
}
