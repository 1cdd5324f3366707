// `svc triggers ...`: the triggers a manifest declares (local), and live ones of a project over the API.
import type { Command } from 'commander';
import { examples } from '../output.js';
import { PATH_ARGUMENT_HELP } from './manifest.js';

const PROJECT_OPTION = ['--project <id>', 'project id or name (default: SVC_PROJECT_ID, else the linked project)'] as const;

export function registerTriggersCommands(program: Command): void {
  const triggers = program
    .command('triggers')
    .description('the cron and webhook triggers of a manifest, and of a live project (SVC_API_URL, SVC_CLI_TOKEN)')
    .addHelpText('after', examples([
      ['svc triggers ls', 'the triggers of ./svc.yaml, with their next fire time'],
      ['svc triggers ls --project web', 'the live triggers of project web: last and next fire, paused, dormant'],
      ['svc triggers fire nightly --message "run now"', 'fire a trigger by hand'],
    ]));
  triggers
    .command('ls')
    .description('list the triggers, normalized (aliases resolved, defaults filled); invalid entries are listed as errors. With --project: the live listing of that project')
    .argument('[path]', PATH_ARGUMENT_HELP, '.')
    .option('--project <id>', 'list the live triggers of this project (id or name) instead of a local file')
    .option('--json', 'print one JSON document: { triggers, errors }')
    .addHelpText('after', examples([
      ['svc triggers ls', 'a table with the next fire time of each cron trigger'],
      ['svc triggers ls svc.toml --json', 'the listing the scheduler uses, as JSON'],
      ['svc triggers ls --project web', 'live: last_fired_at, next_fire_at, dormant, paused'],
    ]) + '\nExit status: 0 listed (even with invalid entries), 1 the file cannot be parsed or the API refused, 2 usage error or unreadable path.\n')
    .action(async (path: string, options: { json?: boolean; project?: string }) => {
      if (options.project) {
        const { liveListCommand } = await import('../trigger-actions.js');
        return liveListCommand(options);
      }
      const { triggersListCommand } = await import('../manifest-actions.js');
      triggersListCommand(path, options);
    });
  triggers
    .command('fire')
    .description('fire a trigger now (write access and project.trigger.fire); the answer says fired (with the session) or queued at the session cap')
    .argument('<slug>', 'the trigger slug')
    .option('--message <text>', 'context for the prompt: {{ message.text }} (message.source is "cli")')
    .option(...PROJECT_OPTION)
    .option('--json', 'print { status, session_id } or { status, reason }')
    .action(async (slug: string, options: { message?: string; project?: string; json?: boolean }) => {
      const { fireCommand } = await import('../trigger-actions.js');
      await fireCommand(slug, options);
    });
  triggers
    .command('fires')
    .description('recent fires of a trigger, newest first: source, instant, phase (fired, queued with position, failed) and session')
    .argument('<slug>', 'the trigger slug')
    .option('--limit <n>', 'how many (1 to 500, default 50)')
    .option(...PROJECT_OPTION)
    .option('--json', 'print { fires: [...] }')
    .action(async (slug: string, options: { limit?: string; project?: string; json?: boolean }) => {
      const { firesCommand } = await import('../trigger-actions.js');
      await firesCommand(slug, options);
    });
  triggers
    .command('resume')
    .description('resume a trigger paused after failed fires in a row (failures before now stop counting)')
    .argument('<slug>', 'the trigger slug')
    .option(...PROJECT_OPTION)
    .option('--json', 'print { trigger }')
    .action(async (slug: string, options: { project?: string; json?: boolean }) => {
      const { resumeCommand } = await import('../trigger-actions.js');
      await resumeCommand(slug, options);
    });
}
