// `svc triggers ls --project|fire|fires|resume` over the REST API; formatting is pure (exported for tests).
import { createApiClient, withApiErrors, type ApiClient } from './api-client.js';
import { formatTable, printJson, printLines } from './output.js';
import { resolveProjectId } from './commands/link.js';

export interface TriggerView {
  slug: string; type: string; enabled: boolean; cron?: string; run_at?: string; timezone?: string;
  /** webhook triggers: the project secret that authenticates deliveries, and whether it is set */
  secret_env?: string; secret_configured?: boolean;
  last_fired_at: string | null; next_fire_at: string | null; dormant: boolean; paused: boolean; consecutive_failures?: number;
  /** prompt tags that render empty at every fire */
  prompt_warnings?: string[];
}
export interface ListingView { triggers: TriggerView[]; errors: { index: number; slug?: string; messages: string[] }[] }
export interface FireView { name: string; source: string; fired_at: string; phase: string; reason: string | null; queue_position: number | null; session_id: string | null }
export type FireAnswerView = { status: 'fired'; session_id: string } | { status: 'queued'; reason: string };

function state(t: TriggerView): string {
  if (t.paused) return `paused (${t.consecutive_failures ?? '?'} failed fires)`;
  if (!t.enabled) return 'disabled';
  if (t.dormant) return 'dormant';
  return 'active';
}

/** `project`: the --project given, repeated in the hint that sets a missing webhook secret. */
export function formatLiveListing(listing: ListingView, project?: string): string[] {
  const lines = listing.triggers.length === 0 ? ['No triggers.'] : formatTable(
    ['slug', 'type', 'schedule', 'state', 'last fired', 'next fire'],
    listing.triggers.map((t) => [t.slug, t.type, t.cron ? `${t.cron} (${t.timezone ?? 'UTC'})` : t.run_at ? `once at ${t.run_at}` : '-', state(t), t.last_fired_at ?? '-', t.next_fire_at ?? '-']),
  );
  for (const e of listing.errors) lines.push(`invalid entry #${e.index}${e.slug ? ` (${e.slug})` : ''}: ${e.messages.join('; ')}`);
  for (const t of listing.triggers) {
    if (t.secret_configured === false && t.enabled) {
      lines.push(`${t.slug}: the project secret ${t.secret_env} is not set, so every delivery is refused (409): printf %s "$SECRET" | svc secrets set ${t.secret_env}${project ? ` --project ${project}` : ''}`);
    }
    for (const warning of t.prompt_warnings ?? []) lines.push(`warning: ${t.slug} prompt: ${warning}`);
  }
  return lines;
}

export function formatFires(fires: FireView[]): string[] {
  if (fires.length === 0) return ['No fires yet.'];
  return formatTable(
    ['fire', 'source', 'fired at', 'phase', 'session / reason'],
    fires.map((f) => [f.name, f.source, f.fired_at, f.phase === 'queued' && f.queue_position ? `queued #${f.queue_position}` : f.phase, f.session_id ?? f.reason ?? '-']),
  );
}

export function formatAnswer(slug: string, answer: FireAnswerView): string {
  return answer.status === 'fired' ? `fired ${slug}: session ${answer.session_id}` : `queued ${slug}: ${answer.reason}`;
}

async function context(projectOption: string | undefined): Promise<{ client: ApiClient; base: string }> {
  const client = createApiClient();
  return { client, base: `/projects/${await resolveProjectId(client, projectOption)}/triggers` };
}

interface Options { project?: string; json?: boolean }

export const liveListCommand = (opts: Options) => withApiErrors(async () => {
  const { client, base } = await context(opts.project);
  const listing = await client.request<ListingView>('GET', base);
  if (opts.json) printJson(listing);
  else printLines(formatLiveListing(listing, opts.project));
});

export const fireCommand = (slug: string, opts: Options & { message?: string }) => withApiErrors(async () => {
  const { client, base } = await context(opts.project);
  const body = opts.message !== undefined ? { message: { text: opts.message, source: 'cli' } } : {};
  const answer = await client.request<FireAnswerView>('POST', `${base}/${encodeURIComponent(slug)}/fire`, body);
  if (opts.json) printJson(answer);
  else printLines([formatAnswer(slug, answer)]);
});

export const firesCommand = (slug: string, opts: Options & { limit?: string }) => withApiErrors(async () => {
  const { client, base } = await context(opts.project);
  const query = opts.limit ? `?limit=${encodeURIComponent(opts.limit)}` : '';
  const { fires } = await client.request<{ fires: FireView[] }>('GET', `${base}/${encodeURIComponent(slug)}/fires${query}`);
  if (opts.json) printJson({ fires });
  else printLines(formatFires(fires));
});

export const resumeCommand = (slug: string, opts: Options) => withApiErrors(async () => {
  const { client, base } = await context(opts.project);
  const { trigger } = await client.request<{ trigger: TriggerView }>('POST', `${base}/${encodeURIComponent(slug)}/resume`, {});
  if (opts.json) printJson({ trigger });
  // the answer is the trigger as the resume found it: the operator clears the pause next
  else if (trigger.paused) printLines([`resumed ${slug}: failed fires before now no longer count`]);
  else printLines([`${slug} was not paused; failed fires before now no longer count toward pausing it`]);
});
