// The model gateway of a project (docs/gateway.md): what its sessions spent (totals, per day,
// per session, per trigger, per model) over a chosen range, the budget and its use, the providers
// (never a key) and the latest requests. Every part needs its own capability; a part the token
// may not see says so and the others still show.
import { budgetRefusal } from '../../../src/lib/budget-view.js';
import type { GatewayBudgetView, GatewayLogEntry, GatewayProviderView, GatewayUsage, GatewayUsageTotals } from '../../../src/lib/rest-shapes.js';
import { api, enc } from '../api.js';
import { href } from '../router.js';
import { Age, Show, useLoad } from '../ui.js';
import type { Project } from './projects.js';

const RANGES: [string, string, number | null][] = [['24h', 'Last 24 h', 86_400_000], ['7d', 'Last 7 days', 7 * 86_400_000], ['30d', 'Last 30 days', 30 * 86_400_000], ['all', 'Everything kept', null]];
const GROUPS = ['day', 'session', 'trigger', 'model'] as const;
type Group = (typeof GROUPS)[number];

const gatewayPath = (project: Project, rest: string) => `/projects/${enc(project.id)}/gateway/${rest}`;
const tokens = (t: GatewayUsageTotals) => t.input_tokens + t.output_tokens;
const n = (v: number) => v.toLocaleString('en');

/** The usage summaries of one range, all four groupings. */
async function loadUsage(project: Project, since: string | null): Promise<Record<Group, GatewayUsage>> {
  const results = await Promise.all(GROUPS.map((g) => api<GatewayUsage>('GET', gatewayPath(project, `usage?group_by=${g}${since ? `&since=${enc(since)}` : ''}`))));
  return Object.fromEntries(GROUPS.map((g, i) => [g, results[i]!])) as Record<Group, GatewayUsage>;
}

function UsageTable({ title, group, usage, project }: { title: string; group: Group; usage: GatewayUsage; project: Project }) {
  const label = (key: string | null) => {
    if (key === null) return <span class="muted">{group === 'trigger' ? 'started by a person' : 'none'}</span>;
    if (group === 'session') return <a href={href(['projects', project.id, 'sessions', key])}><code>{key.slice(0, 8)}</code></a>;
    return <code>{key}</code>;
  };
  return (
    <section aria-label={title}>
      <h2>{title}</h2>
      {usage.groups.length === 0 ? <p class="muted">No model requests.</p> : (
        <div class="table-wrap">
          <table>
            <thead><tr><th>{group[0]!.toUpperCase() + group.slice(1)}</th><th>Requests</th><th>Input tokens</th><th>Output tokens</th><th>Tokens</th></tr></thead>
            <tbody>
              {usage.groups.map((g) => (
                <tr key={String(g.key)}><td>{label(g.key)}</td><td>{n(g.requests)}</td><td>{n(g.input_tokens)}</td><td>{n(g.output_tokens)}</td><td>{n(tokens(g))}</td></tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function Budget({ project }: { project: Project }) {
  const loaded = useLoad(() => api<GatewayBudgetView>('GET', gatewayPath(project, 'budget')), project.id);
  return (
    <section aria-label="Budget">
      <h2>Budget</h2>
      <Show loaded={loaded} what="the budget">{(view) => {
        const { budget, used } = view;
        const refusal = budgetRefusal(view);
        return (
          <dl class="facts">
            <dt>Project limit</dt><dd>{budget.max_tokens === null ? 'none' : `${n(budget.max_tokens)} tokens per ${budget.period === 'total' ? 'project, all time' : `${budget.period} (UTC)`}`}</dd>
            <dt>Used</dt><dd>{n(used.period_tokens)} tokens {budget.period === 'total' ? 'in all' : `this ${budget.period}`}{budget.max_tokens ? <span class="muted"> ({Math.round((100 * used.period_tokens) / budget.max_tokens)}%)</span> : null}
              {refusal ? <> <span class="bad">used up</span>: {refusal}</> : null}</dd>
            <dt>Per session</dt><dd>{budget.max_tokens_per_session === null ? 'no limit' : `${n(budget.max_tokens_per_session)} tokens`}</dd>
          </dl>
        );
      }}</Show>
      <p class="muted">Change it with <code>svc gateway budget</code>. A model request that starts past a limit is refused (429 BUDGET_EXCEEDED).</p>
    </section>
  );
}

function Providers({ project }: { project: Project }) {
  const loaded = useLoad(() => api<{ providers: GatewayProviderView[] }>('GET', gatewayPath(project, 'providers')), project.id);
  return (
    <section aria-label="Providers">
      <h2>Providers</h2>
      <Show loaded={loaded} what="the providers">{({ providers }) => providers.length === 0
        ? <p>No providers: sessions get no model. Add one with <code>printf %s "$KEY" | svc gateway providers set openai</code>.</p>
        : (
          <div class="table-wrap">
            <table>
              <thead><tr><th>Name</th><th>Protocol</th><th>Base URL</th><th>Key set</th></tr></thead>
              <tbody>{providers.map((p) => <tr key={p.name}><td><code>{p.name}</code></td><td>{p.protocol}</td><td><code>{p.base_url}</code></td><td><Age at={p.updated_at} /></td></tr>)}</tbody>
            </table>
          </div>
        )}</Show>
    </section>
  );
}

function Requests({ project }: { project: Project }) {
  const loaded = useLoad(() => api<{ entries: GatewayLogEntry[] }>('GET', gatewayPath(project, 'logs?limit=20')), project.id);
  return (
    <section aria-label="Latest requests">
      <h2>Latest requests</h2>
      <Show loaded={loaded} what="the requests">{({ entries }) => entries.length === 0 ? <p class="muted">None yet.</p> : (
        <div class="table-wrap">
          <table>
            <thead><tr><th>When</th><th>Session</th><th>Provider</th><th>Model</th><th>Status</th><th>Tokens in / out</th><th>Time</th></tr></thead>
            <tbody>
              {entries.map((e, i) => (
                <tr key={`${e.at}-${i}`}>
                  <td><Age at={e.at} /></td>
                  <td>{e.session_id ? <a href={href(['projects', project.id, 'sessions', e.session_id])}><code>{e.session_id.slice(0, 8)}</code></a> : '—'}</td>
                  <td>{e.provider}</td><td>{e.model ?? '—'}</td><td>{e.status}</td>
                  <td>{n(e.input_tokens)} / {n(e.output_tokens)}</td><td>{n(e.duration_ms)} ms</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}</Show>
    </section>
  );
}

export function UsagePage({ project, range }: { project: Project; range: string }) {
  const chosen = RANGES.find(([slug]) => slug === range) ?? RANGES[1]!;
  const [, , span] = chosen;
  const loaded = useLoad(() => loadUsage(project, span === null ? null : new Date(Date.now() - span).toISOString()), `${project.id}:${chosen[0]}`);
  return (
    <main>
      <h1>Model usage</h1>
      <nav class="filter" aria-label="Range">
        {RANGES.map(([slug, label]) => <a key={slug} href={href(['projects', project.id, 'usage'], { range: slug })} aria-current={slug === chosen[0] ? 'page' : undefined}>{label}</a>)}
      </nav>
      <Show loaded={loaded} what="the usage">{(usage) => (
        <>
          <dl class="facts" aria-label="Totals">
            <dt>Requests</dt><dd>{n(usage.day.total.requests)}</dd>
            <dt>Input tokens</dt><dd>{n(usage.day.total.input_tokens)}</dd>
            <dt>Output tokens</dt><dd>{n(usage.day.total.output_tokens)}</dd>
            <dt>Tokens</dt><dd><strong>{n(tokens(usage.day.total))}</strong></dd>
          </dl>
          <UsageTable title="Per day (UTC)" group="day" usage={usage.day} project={project} />
          <UsageTable title="Per session" group="session" usage={usage.session} project={project} />
          <UsageTable title="Per trigger" group="trigger" usage={usage.trigger} project={project} />
          <UsageTable title="Per model" group="model" usage={usage.model} project={project} />
        </>
      )}</Show>
      <Budget project={project} />
      <Providers project={project} />
      <Requests project={project} />
    </main>
  );
}

/** A session's tokens for its page: null when the token may not read spending. */
export async function sessionTokens(project: Project, sessionId: string): Promise<(GatewayUsageTotals & { visible: true }) | { visible: false }> {
  try {
    const usage = await api<GatewayUsage>('GET', gatewayPath(project, 'usage?group_by=session'));
    const mine = usage.groups.find((g) => g.key === sessionId);
    return { visible: true, requests: mine?.requests ?? 0, input_tokens: mine?.input_tokens ?? 0, output_tokens: mine?.output_tokens ?? 0 };
  } catch {
    return { visible: false };
  }
}
