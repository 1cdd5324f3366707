// `svc tokens create|ls|revoke`: token administration by a cluster admin with a kubeconfig
// (docs/tokens.md). The token Secrets are written directly; the token is printed once.
import type { Command } from 'commander';
import { CliError, EXIT, examples, formatTable, printJson, printLines } from '../output.js';
import type { SerializedToken } from '../../lib/rest-shapes.js';
import type { TokenAdmin } from '../../main/token-admin.js';

interface TokenView extends SerializedToken { project: string | null }

interface AdminFlags { namespace?: string; projectNamespace?: string }

const collect = (value: string, previous: string[]) => [...previous, value];

function scopeOf(t: TokenView): string {
  return t.project ?? 'all projects';
}

function capabilitiesOf(t: TokenView): string {
  return t.capabilities.length ? t.capabilities.join(',') : '-';
}

export function formatTokenList(tokens: TokenView[]): string[] {
  if (tokens.length === 0) return ['No tokens. Create one with: svc tokens create --name NAME [--write] [--project P]'];
  return formatTable(
    ['name', 'access', 'project', 'capabilities', 'expires', 'last used'],
    tokens.map((t) => [t.name, t.access, scopeOf(t), capabilitiesOf(t), t.expires_at ? `${t.expires_at}${t.expired ? ' (expired)' : ''}` : 'never', t.last_used_at ?? 'never']),
  );
}

export function formatCreated(t: TokenView, value: string): string[] {
  return [
    `Token ${t.name} created: ${t.access} access, ${scopeOf(t)}, capabilities ${capabilitiesOf(t)}, expires ${t.expires_at ?? 'never'}.`,
    value,
    'Copy it now: it is not shown again. Use it as SVC_CLI_TOKEN, or send Authorization: Bearer <token>.',
  ];
}

/** Loads the admin (kubeconfig, namespaces) and turns its errors into `svc: <message>`, exit 1. */
async function withAdmin<T>(flags: AdminFlags, action: (admin: TokenAdmin) => Promise<T>): Promise<T> {
  const { TokenAdmin, TokenAdminError, NoKubeConfigError } = await import('../../main/token-admin.js');
  try {
    return await action(new TokenAdmin({ namespace: flags.namespace, projectNamespace: flags.projectNamespace }));
  } catch (error) {
    if (error instanceof TokenAdminError || error instanceof NoKubeConfigError) throw new CliError(error.message, EXIT.invalid);
    const message = error instanceof Error ? error.message : String(error);
    throw new CliError(`${message} (svc tokens needs a kubeconfig with access to the cluster: set KUBECONFIG)`, EXIT.invalid);
  }
}

function adminOptions(command: Command): Command {
  return command
    .option('-n, --namespace <ns>', 'namespace of the token Secrets, the API\'s SVC_NAMESPACE (default: $SVC_NAMESPACE, else the kubeconfig\'s)')
    .option('--project-namespace <ns>', 'namespace of the projects (default: $SVC_PROJECT_NAMESPACE, else --namespace)');
}

export function registerTokensCommands(program: Command): void {
  const tokens = program
    .command('tokens')
    .description('create, list and revoke API tokens (cluster admin: needs a kubeconfig)');
  tokens.addHelpText('after', examples([
    ['svc tokens create --name ci --write --project demo --capability project.gitops.push --expires 30d', 'a CI token for one project'],
    ['svc tokens ls', 'names, scopes, expiry and last use (never the values)'],
    ['svc tokens revoke ci', 'the token stops working at once'],
  ]));

  adminOptions(tokens
    .command('create')
    .description('mint a token and print it once')
    .requiredOption('--name <name>', 'what to call it (lower case; unique)')
    .option('--read', 'read access (the default)')
    .option('--write', 'write access (implies read)')
    .option('--project <project>', 'scope it to one project (name or id); default: every project')
    .option('--capability <name>', 'a capability such as project.gitops.push, or * for all (repeatable)', collect, [])
    .option('--expires <duration>', 'expire after this long, e.g. 12h, 30d (default: never)')
    .option('--user <id>', 'the user id (UUID) it acts as (default: a new one)')
    .option('--json', 'print { token, value } as JSON'))
    .action(async (opts: AdminFlags & { name: string; read?: boolean; write?: boolean; project?: string; capability: string[]; expires?: string; user?: string; json?: boolean }) => {
      const created = await withAdmin(opts, (admin) => admin.create({
        name: opts.name,
        access: opts.write ? 'write' : 'read',
        project: opts.project,
        capabilities: opts.capability,
        expires: opts.expires,
        userId: opts.user,
      }));
      if (opts.json) printJson(created);
      else printLines(formatCreated(created.token, created.value));
    });

  adminOptions(tokens
    .command('ls')
    .description('list tokens: names, scopes, expiry, last use (never the values)')
    .option('--json', 'print { tokens: [...] } as JSON'))
    .action(async (opts: AdminFlags & { json?: boolean }) => {
      const list = await withAdmin(opts, (admin) => admin.list());
      if (opts.json) printJson({ tokens: list });
      else printLines(formatTokenList(list));
    });

  adminOptions(tokens
    .command('revoke')
    .description('delete a token: it is refused (401) from now on')
    .argument('<name>', 'the token\'s name (svc tokens ls)')
    .option('--json', 'print { revoked: NAME } as JSON'))
    .action(async (name: string, opts: AdminFlags & { json?: boolean }) => {
      await withAdmin(opts, (admin) => admin.revoke(name));
      if (opts.json) printJson({ revoked: name });
      else printLines([`Token ${name} revoked.`]);
    });
}
