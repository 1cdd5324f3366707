// `svc secrets set|ls|rm`: a project's secrets (SPEC §2.4), injected into new sandboxes as plain
// environment variables. Values are read from --value or stdin and never printed.
import type { Command } from 'commander';
import { createApiClient, withApiErrors } from '../api-client.js';
import { readStdin } from '../input.js';
import { examples, formatTable, printJson, printLines } from '../output.js';
import { PROJECT_OPTION } from './cr.js';
import { resolveProjectId } from './link.js';

interface Listing { secrets: { name: string; updated_at: string | null }[]; revision: string }

export function formatSecrets(listing: Listing): string[] {
  if (listing.secrets.length === 0) return ['No secrets.', `Revision: ${listing.revision}`];
  return [...formatTable(['name', 'updated'], listing.secrets.map((s) => [s.name, s.updated_at ?? '-'])), '', `Revision: ${listing.revision}`];
}

async function client(projectOption: string | undefined) {
  const api = createApiClient();
  const projectId = await resolveProjectId(api, projectOption);
  return { api, base: `/projects/${projectId}/secrets` };
}

export function registerSecretsCommands(program: Command): void {
  const secrets = program.command('secrets').description("a project's secrets: injected into new sessions' sandboxes as environment variables (SVC_API_URL, SVC_CLI_TOKEN)");
  secrets.addHelpText('after', examples([
    ['printf %s "$KEY" | svc secrets set API_KEY', 'set from stdin (keeps it out of shell history)'],
    ['svc secrets ls', 'names and when each was set; never values'],
    ['svc secrets rm API_KEY', 'remove one'],
  ]) + '\nA running session keeps the secrets it started with; new sessions get the current set.\n');

  secrets.command('set')
    .description('set a secret (NAME: upper-case letters, digits and _, not starting with SVC_); the value comes from --value or stdin')
    .argument('<name>', 'e.g. API_KEY')
    .option('--value <value>', 'the value (else read from stdin; one trailing newline is dropped)')
    .option(...PROJECT_OPTION)
    .option('--json', 'print { name, set: true }')
    .action((name: string, opts: { value?: string; project?: string; json?: boolean }) => withApiErrors(async () => {
      const value = opts.value ?? (await readStdin('no value: pass --value VALUE or pipe it on stdin (printf %s "$VALUE" | svc secrets set NAME)'));
      const { api, base } = await client(opts.project);
      await api.request('PUT', `${base}/${encodeURIComponent(name)}`, { value });
      if (opts.json) printJson({ name, set: true });
      // an unset variable piped in sets an empty value without an error anywhere: say it
      else printLines([`Secret ${name} set${value === '' ? ` to an empty value (${opts.value === undefined ? 'nothing came on stdin' : '--value ""'})` : ''}. New sessions get it; running ones keep what they started with.`]);
    }));

  secrets.command('ls')
    .description('list the secret names, when each was set, and the revision of the set')
    .option(...PROJECT_OPTION)
    .option('--json', 'print { secrets: [{ name, updated_at }], revision }')
    .action((opts: { project?: string; json?: boolean }) => withApiErrors(async () => {
      const { api, base } = await client(opts.project);
      const listing = await api.request<Listing>('GET', base);
      if (opts.json) printJson(listing);
      else printLines(formatSecrets(listing));
    }));

  secrets.command('rm')
    .description('remove a secret')
    .argument('<name>', 'e.g. API_KEY')
    .option(...PROJECT_OPTION)
    .option('--json', 'print { name, removed: true }')
    .action((name: string, opts: { project?: string; json?: boolean }) => withApiErrors(async () => {
      const { api, base } = await client(opts.project);
      await api.request('DELETE', `${base}/${encodeURIComponent(name)}`);
      if (opts.json) printJson({ name, removed: true });
      else printLines([`Secret ${name} removed.`]);
    }));
}
