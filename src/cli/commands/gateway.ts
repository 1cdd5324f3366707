// `svc gateway providers set|ls|rm`, `svc gateway usage`, `svc gateway logs`, `svc gateway budget`:
// the model gateway of a project (DESIGN §8.2, docs/gateway.md). A provider key is read from stdin,
// or from --api-key when a person chooses it as with `svc secrets set --value` (argv is visible to
// every process of the machine and kept in shell history), and never printed. Formatting is pure.
import type { Command } from 'commander';
import { budgetRefusal } from '../../lib/budget-view.js';
import { parseDuration } from '../../lib/duration.js';
import type { GatewayBudgetView, GatewayLogEntry, GatewayProviderView, GatewayUsage } from '../../lib/rest-shapes.js';
import { apiAction, createApiClient, type ApiClient } from '../api-client.js';
import { readStdin } from '../input.js';
import { CliError, EXIT, examples, formatTable, printJson, printLines } from '../output.js';
import { PROJECT_OPTION } from './cr.js';
import { resolveProjectId } from './link.js';

const GROUPINGS = ['session', 'trigger', 'model', 'day'];
const PERIODS = ['day', 'month', 'total'];

export function formatProviders(providers: GatewayProviderView[]): string[] {
  if (providers.length === 0) return ['No model providers: sessions get no SVC_LLM_* variables. Add one with: printf %s "$KEY" | svc gateway providers set openai'];
  return formatTable(['name', 'protocol', 'base url', 'updated'], providers.map((p) => [p.name, p.protocol, p.base_url, p.updated_at ?? '-']));
}

const tokens = (t: { input_tokens: number; output_tokens: number }) => String(t.input_tokens + t.output_tokens);

export function formatUsage(usage: GatewayUsage, groupBy: string): string[] {
  const total = `Total: ${usage.total.requests} requests, ${usage.total.input_tokens} input + ${usage.total.output_tokens} output = ${tokens(usage.total)} tokens`;
  if (usage.groups.length === 0) return ['No model requests in this range.', total];
  return [
    ...formatTable([groupBy, 'requests', 'input', 'output', 'tokens'], usage.groups.map((g) => [g.key ?? '-', String(g.requests), String(g.input_tokens), String(g.output_tokens), tokens(g)])),
    '',
    total,
  ];
}

export function formatLogs(entries: GatewayLogEntry[]): string[] {
  if (entries.length === 0) return ['No model requests recorded.'];
  return formatTable(
    ['at', 'session', 'trigger', 'provider', 'model', 'status', 'input', 'output', 'ms'],
    entries.map((e) => [e.at, e.session_id ?? '-', e.trigger ?? '-', e.provider, e.model ?? '-', String(e.status), String(e.input_tokens), String(e.output_tokens), String(e.duration_ms)]),
  );
}

export function formatBudget(view: GatewayBudgetView): string[] {
  const { budget, used } = view;
  const period = budget.period === 'total' ? 'all time' : `this ${budget.period} (UTC)`;
  const refusal = budgetRefusal(view);
  const rows: [string, string][] = [
    ['Period:', budget.period],
    ['Project limit:', budget.max_tokens === null ? 'none' : `${budget.max_tokens} tokens`],
    ['Per-session limit:', budget.max_tokens_per_session === null ? 'none' : `${budget.max_tokens_per_session} tokens`],
    [`Used ${period}:`, `${used.period_tokens} tokens${refusal ? `: used up, ${refusal}` : ''}`],
  ];
  const width = Math.max(...rows.map(([label]) => label.length)) + 2;
  return rows.map(([label, value]) => label.padEnd(width) + value);
}

/** `N` or `none` (null). */
export function parseLimit(value: string, flag: string): number | null {
  if (value === 'none') return null;
  if (!/^\d{1,15}$/.test(value)) throw new CliError(`${flag} takes a whole number of tokens or "none", got ${JSON.stringify(value)}`, EXIT.usage);
  return Number(value);
}

/** RFC 3339 as given, or a duration back from now (`24h`, `7d`). */
export function parseSince(value: string, now = Date.now()): string {
  const ms = parseDuration(value);
  if (ms !== null) return new Date(now - ms).toISOString();
  if (Number.isNaN(Date.parse(value))) throw new CliError(`--since takes an RFC 3339 time (2026-01-31T00:00:00Z) or a duration back from now (24h, 7d), got ${JSON.stringify(value)}`, EXIT.usage);
  return value;
}

/** The key piped on stdin, without the one line ending `echo` adds. */
async function readStdinKey(): Promise<string> {
  const key = await readStdin('no key: pipe it on stdin (printf %s "$KEY" | svc gateway providers set NAME), or pass --api-key KEY (visible to every process of this machine)');
  if (!key) throw new CliError('no key on stdin', EXIT.usage);
  return key;
}

async function gatewayBase(projectOption: string | undefined): Promise<{ api: ApiClient; base: string }> {
  const api = createApiClient();
  return { api, base: `/projects/${await resolveProjectId(api, projectOption)}/gateway` };
}

export function registerGatewayCommands(program: Command): void {
  const gateway = program.command('gateway').description('the model gateway: provider keys kept out of sandboxes, token usage, request logs, budgets');
  gateway.addHelpText('after', examples([
    ['printf %s "$OPENAI_API_KEY" | svc gateway providers set openai', 'a key for every session of the project (read from stdin)'],
    ['printf %s "$K" | svc gateway providers set local --base-url http://10.0.0.5:8000/v1', 'any OpenAI-compatible server'],
    ['svc gateway usage --group-by session --since 24h', 'tokens per session over the last day'],
    ['svc gateway budget --period day --max-tokens 2000000', 'stop a runaway trigger'],
  ]) + '\nSessions reach the providers through SVC_LLM_BASE_URL with their own SVC_LLM_API_KEY; the real key never enters a sandbox.\n');

  const providers = gateway.command('providers').description('provider keys of the project');
  providers.command('set')
    .description('set a provider: its key from stdin (or --api-key); openai and anthropic have default base URLs, any other name needs --base-url')
    .argument('<name>', 'a slug: openai, anthropic, or your own (e.g. local)')
    .option('--base-url <url>', 'the provider\'s API base, e.g. https://api.openai.com/v1')
    .option('--api-key <key>', 'the key (else read from stdin, which is safer: an argument is visible in ps and kept in shell history)')
    .option('--protocol <protocol>', 'openai (chat completions, responses, models) or anthropic (messages); default: anthropic for the name anthropic, else openai')
    .option(...PROJECT_OPTION)
    .option('--json', 'print { name, set: true }')
    .action(apiAction(async (name: string, opts: { baseUrl?: string; apiKey?: string; protocol?: string; project?: string; json?: boolean }) => {
      if (opts.protocol !== undefined && !['openai', 'anthropic'].includes(opts.protocol)) throw new CliError('--protocol is openai or anthropic', EXIT.usage);
      if (opts.apiKey === '') throw new CliError('--api-key is empty', EXIT.usage);
      const apiKey = opts.apiKey ?? await readStdinKey();
      const { api, base } = await gatewayBase(opts.project);
      await api.request('PUT', `${base}/providers/${encodeURIComponent(name)}`, {
        api_key: apiKey, ...(opts.baseUrl !== undefined ? { base_url: opts.baseUrl } : {}), ...(opts.protocol !== undefined ? { protocol: opts.protocol } : {}),
      });
      if (opts.json) printJson({ name, set: true });
      else printLines([`Provider ${name} set. New sessions reach it through the gateway; running ones use the new key at once.`]);
    }));

  providers.command('ls')
    .description('list the providers (never their keys)')
    .option(...PROJECT_OPTION)
    .option('--json', 'print { providers: [{ name, protocol, base_url, updated_at }] }')
    .action(apiAction(async (opts: { project?: string; json?: boolean }) => {
      const { api, base } = await gatewayBase(opts.project);
      const listing = await api.request<{ providers: GatewayProviderView[] }>('GET', `${base}/providers`);
      if (opts.json) printJson(listing);
      else printLines(formatProviders(listing.providers));
    }));

  providers.command('rm')
    .description('remove a provider (its key is deleted)')
    .argument('<name>')
    .option(...PROJECT_OPTION)
    .option('--json', 'print { name, removed: true }')
    .action(apiAction(async (name: string, opts: { project?: string; json?: boolean }) => {
      const { api, base } = await gatewayBase(opts.project);
      await api.request('DELETE', `${base}/providers/${encodeURIComponent(name)}`);
      if (opts.json) printJson({ name, removed: true });
      else printLines([`Provider ${name} removed.`]);
    }));

  gateway.command('usage')
    .description('tokens the project\'s sessions spent, grouped')
    .option('--group-by <what>', `one of ${GROUPINGS.join(', ')}`, 'day')
    .option('--since <time>', 'RFC 3339, or a duration back from now (24h, 7d)')
    .option(...PROJECT_OPTION)
    .option('--json', 'print { total, groups: [{ key, requests, input_tokens, output_tokens }] }')
    .action(apiAction(async (opts: { groupBy: string; since?: string; project?: string; json?: boolean }) => {
      if (!GROUPINGS.includes(opts.groupBy)) throw new CliError(`--group-by is one of ${GROUPINGS.join(', ')}`, EXIT.usage);
      const query = new URLSearchParams({ group_by: opts.groupBy });
      if (opts.since !== undefined) query.set('since', parseSince(opts.since));
      const { api, base } = await gatewayBase(opts.project);
      const usage = await api.request<GatewayUsage>('GET', `${base}/usage?${query}`);
      if (opts.json) printJson(usage);
      else printLines(formatUsage(usage, opts.groupBy));
    }));

  gateway.command('logs')
    .description('the latest model requests, newest first (never prompts or completions)')
    .option('--session <id>', 'only this session\'s')
    .option('--limit <n>', 'at most this many (1-1000)', '50')
    .option(...PROJECT_OPTION)
    .option('--json', 'print { entries: [...] }')
    .action(apiAction(async (opts: { session?: string; limit: string; project?: string; json?: boolean }) => {
      const query = new URLSearchParams({ limit: opts.limit });
      if (opts.session !== undefined) query.set('session', opts.session);
      const { api, base } = await gatewayBase(opts.project);
      const logs = await api.request<{ entries: GatewayLogEntry[] }>('GET', `${base}/logs?${query}`);
      if (opts.json) printJson(logs);
      else printLines(formatLogs(logs.entries));
    }));

  gateway.command('budget')
    .description('show the budget, or change it: a model request that starts at or past a limit is refused (429 BUDGET_EXCEEDED)')
    .option('--period <period>', `what --max-tokens counts over: ${PERIODS.join(', ')} (UTC)`)
    .option('--max-tokens <n>', 'tokens per period for the whole project, or none')
    .option('--max-tokens-per-session <n>', 'tokens per session, or none')
    .option(...PROJECT_OPTION)
    .option('--json', 'print { budget: { period, max_tokens, max_tokens_per_session }, used: { period_tokens } }')
    .action(apiAction(async (opts: { period?: string; maxTokens?: string; maxTokensPerSession?: string; project?: string; json?: boolean }) => {
      if (opts.period !== undefined && !PERIODS.includes(opts.period)) throw new CliError(`--period is one of ${PERIODS.join(', ')}`, EXIT.usage);
      const maxTokens = opts.maxTokens === undefined ? undefined : parseLimit(opts.maxTokens, '--max-tokens');
      const perSession = opts.maxTokensPerSession === undefined ? undefined : parseLimit(opts.maxTokensPerSession, '--max-tokens-per-session');
      const { api, base } = await gatewayBase(opts.project);
      const changes = opts.period !== undefined || maxTokens !== undefined || perSession !== undefined;
      const complete = opts.period !== undefined && maxTokens !== undefined && perSession !== undefined;
      // all three flags: the PUT alone (project.gateway.budget.set is all it needs); else what a
      // flag does not name stays as it is, read first (project.gateway.spend.read)
      let view = complete ? undefined : await api.request<GatewayBudgetView>('GET', `${base}/budget`);
      if (changes) {
        view = await api.request<GatewayBudgetView>('PUT', `${base}/budget`, {
          period: opts.period ?? view!.budget.period,
          max_tokens: maxTokens === undefined ? view!.budget.max_tokens : maxTokens,
          max_tokens_per_session: perSession === undefined ? view!.budget.max_tokens_per_session : perSession,
        });
      }
      if (opts.json) printJson(view!);
      else printLines(formatBudget(view!));
    }));
}
