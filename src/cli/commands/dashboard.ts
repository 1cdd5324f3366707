// `svc dashboard [--no-open] [--json]`: opens the web dashboard of the API in SVC_API_URL in a
// browser, or prints its URL when no browser can be opened (docs/dashboard.md).
import { spawn } from 'node:child_process';
import type { Command } from 'commander';
import { CliError, EXIT, examples, printJson } from '../output.js';

/** The dashboard is served at the root of the API's origin (REST lives under /v1). */
export function dashboardUrl(apiUrl: string): string {
  let url: URL;
  try { url = new URL(apiUrl); } catch { throw new CliError(`SVC_API_URL ${JSON.stringify(apiUrl)} is not a URL (expected e.g. http://127.0.0.1:8080/v1)`, EXIT.usage); }
  url.pathname = url.pathname.replace(/\/v1\/?$/, '/').replace(/\/?$/, '/');
  url.search = '';
  url.hash = '';
  return url.toString();
}

/** The platform's "open this URL" command, or null when there is no graphical session to show it in. */
export function opener(platform: NodeJS.Platform, env: NodeJS.ProcessEnv): [string, string[]] | null {
  if (platform === 'darwin') return ['open', []];
  if (!env.DISPLAY && !env.WAYLAND_DISPLAY) return null;
  return ['xdg-open', []];
}

/** Resolves true when the opener ran and exited 0. */
function tryOpen(url: string): Promise<boolean> {
  const command = opener(process.platform, process.env);
  if (!command) return Promise.resolve(false);
  return new Promise((resolve) => {
    const child = spawn(command[0], [...command[1], url], { stdio: 'ignore', detached: true });
    child.once('error', () => resolve(false));
    child.once('exit', (code) => resolve(code === 0));
    child.unref();
  });
}

export function registerDashboardCommand(program: Command): void {
  program
    .command('dashboard')
    .description('open the web dashboard (prints its URL when no browser can be opened)')
    .option('--no-open', 'only print the URL')
    .option('--json', 'print { url, opened } as JSON')
    .addHelpText('after', examples([
      ['svc dashboard', 'open the dashboard of $SVC_API_URL; sign in with $SVC_CLI_TOKEN'],
      ['svc dashboard --no-open', 'print the URL'],
    ]))
    .action(async (opts: { open: boolean; json?: boolean }) => {
      const apiUrl = process.env.SVC_API_URL?.trim();
      if (!apiUrl) throw new CliError('SVC_API_URL is not set: run `source .svc-dev/env` after `svc dev`, or export it', EXIT.usage);
      const url = dashboardUrl(apiUrl);
      const opened = opts.open ? await tryOpen(url) : false;
      if (opts.json) { printJson({ url, opened }); return; }
      process.stdout.write(opened
        ? `Opened ${url} in your browser. Sign in with your API token ($SVC_CLI_TOKEN).\n`
        : `Dashboard: ${url}\nOpen it in a browser and sign in with your API token ($SVC_CLI_TOKEN).\n`);
    });
}
