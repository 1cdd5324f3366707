// `svc triggers ...`: the triggers a manifest declares.
import type { Command } from 'commander';
import { examples } from '../output.js';
import { PATH_ARGUMENT_HELP } from './manifest.js';

export function registerTriggersCommands(program: Command): void {
  const triggers = program
    .command('triggers')
    .description('the cron and webhook triggers of a manifest')
    .addHelpText('after', examples([['svc triggers ls', 'the triggers of ./svc.yaml, with their next fire time']]));
  triggers
    .command('ls')
    .description('list the triggers, normalized (aliases resolved, defaults filled); invalid entries are listed as errors')
    .argument('[path]', PATH_ARGUMENT_HELP, '.')
    .option('--json', 'print one JSON document: { triggers, errors }')
    .addHelpText('after', examples([
      ['svc triggers ls', 'a table with the next fire time of each cron trigger'],
      ['svc triggers ls svc.toml --json', 'the listing the scheduler uses, as JSON'],
    ]) + '\nExit status: 0 listed (even with invalid entries), 1 the file cannot be parsed, 2 usage error or unreadable path.\n')
    .action(async (path: string, options: { json?: boolean }) => {
      const { triggersListCommand } = await import('../manifest-actions.js');
      triggersListCommand(path, options);
    });
}
