// The `svc` command line. Each command group lives in commands/<group>.ts and registers itself
// here; groups import their heavy modules inside actions, so `svc --version` loads little.
import { Command, CommanderError } from 'commander';
import { CliError, EXIT, examples, onOutputError } from './output.js';
import { packageVersion } from './version.js';
import { registerManifestCommands } from './commands/manifest.js';
import { registerTriggersCommands } from './commands/triggers.js';
import { registerShipCommand } from './commands/ship.js';
import { registerCrCommands } from './commands/cr.js';
import { registerLinkCommand } from './commands/link.js';
import { registerProjectsCommands } from './commands/projects.js';
import { registerDevCommand } from './commands/dev.js';
import { registerDashboardCommand } from './commands/dashboard.js';
import { registerSecretsCommands } from './commands/secrets.js';
import { registerSessionsCommands } from './commands/sessions.js';
import { registerTokensCommands } from './commands/tokens.js';
import { registerGatewayCommands } from './commands/gateway.js';

// A reader that goes away (`svc cr ls | head`) is not an error: stop quietly, as Unix tools do
// (`svc dev` keeps running until a signal stops it: output.ts).
for (const stream of [process.stdout, process.stderr]) stream.on('error', onOutputError);

const COMMAND_GROUPS: ((program: Command) => void)[] = [
  registerManifestCommands,
  registerTriggersCommands,
  registerShipCommand,
  registerCrCommands,
  registerProjectsCommands,
  // after the `projects` group: adds `svc projects link` to it
  registerLinkCommand,
  registerDevCommand,
  registerDashboardCommand,
  registerSecretsCommands,
  registerSessionsCommands,
  registerTokensCommands,
  registerGatewayCommands,
];

export function buildProgram(): Command {
  const program = new Command('svc')
    .description('svc: projects, change requests and triggers for AI coding agents')
    .version(packageVersion(), '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  program.addHelpText('after', examples([
    ['svc manifest validate', 'check ./svc.yaml (or ./svc.toml) and the agent files'],
    ['svc triggers ls --json', 'the normalized triggers of ./svc.yaml'],
    ['svc ship --dry-run', 'the pre-flight check that svc ship runs'],
  ]));
  for (const register of COMMAND_GROUPS) register(program);
  return program;
}

export async function run(argv: readonly string[]): Promise<void> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv as string[]);
  } catch (err) {
    if (err instanceof CommanderError) {
      // help and version exit 0; every other commander error is a usage error
      process.exitCode = err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    } else if (err instanceof CliError) {
      process.stderr.write(`svc: ${err.message}\n`);
      process.exitCode = err.exitCode;
    } else {
      throw err;
    }
  }
}

await run(process.argv);
