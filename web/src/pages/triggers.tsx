// Triggers: the live listing (schedule or webhook URL, next fire in the viewer's and the
// trigger's zone, last fired, paused/dormant, invalid entries), fire now, and recent fires.
import { useState } from 'preact/hooks';
import { api, CAP, canWrite, enc, type Me } from '../api.js';
import { href } from '../router.js';
import { Age, ErrorBox, Show, Status, useAction, useLoad } from '../ui.js';
import type { Project } from './projects.js';

/** A trigger of GET /v1/projects/:id/triggers (DESIGN §4 "Interfaces pinned"). */
export interface Trigger {
  slug: string;
  type: 'cron' | 'webhook' | string;
  name?: string;
  cron?: string;
  run_at?: string;
  timezone?: string;
  secret_env?: string;
  /** A webhook trigger's: whether the project secret it names is set (every delivery gets 409 until it is). */
  secret_configured?: boolean;
  agent?: string;
  enabled: boolean;
  last_fired_at: string | null;
  next_fire_at: string | null;
  dormant: boolean;
  paused: boolean;
  /** Why it is paused (the failures in a row and the last one's cause), null when it is not. */
  paused_reason?: string | null;
  consecutive_failures?: number;
  last_session_id?: string | null;
  /** Tags of its prompt that name no variable of a fire and render empty (a warning, never an error). */
  prompt_warnings?: string[];
}
export interface TriggerListing { triggers: Trigger[]; errors: { index: number; slug?: string; messages: string[] }[] }
export interface Fire { name: string; source: string; fired_at: string | null; phase: string | null; reason: string | null; queue_position: number | null; session_id: string | null }
export type FireAnswer = { status: 'fired'; session_id: string } | { status: 'queued'; reason: string };

const triggersPath = (project: Project, slug?: string) => `/projects/${enc(project.id)}/triggers${slug ? `/${enc(slug)}` : ''}`;

/** The receiver's URL for a webhook trigger (SPEC §4.2), on the origin serving this page. */
export function webhookUrl(projectId: string, slug: string): string {
  return `${location.origin}/v1/webhooks/projects/${enc(projectId)}/${enc(slug)}`;
}

function When({ at, zone }: { at: string | null; zone?: string }) {
  if (!at) return <span class="muted">—</span>;
  const date = new Date(at);
  const local = date.toLocaleString();
  let there = '';
  try { there = zone ? date.toLocaleString(undefined, { timeZone: zone, timeZoneName: 'short' }) : ''; } catch { there = ''; }
  return <span><Age at={at} /><br /><span class="muted">{local}{there && there !== local ? ` · ${there}` : ''}</span></span>;
}

function CopyButton({ text }: { text: string }) {
  const [copied, setCopied] = useState(false);
  return <button type="button" class="secondary" onClick={() => void navigator.clipboard?.writeText(text).then(() => setCopied(true), () => setCopied(false))}>{copied ? 'Copied' : 'Copy'}</button>;
}

function Fires({ project, slug }: { project: Project; slug: string }) {
  const loaded = useLoad(() => api<{ fires: Fire[] }>('GET', `${triggersPath(project, slug)}/fires`), `${project.id}:${slug}`);
  return (
    <Show loaded={loaded} what="recent fires">{({ fires }) => fires.length === 0 ? <p class="muted">No fires yet.</p> : (
      <ul class="fires">
        {fires.map((fire) => (
          <li key={fire.name}>
            <Status value={fire.phase ?? 'pending'} /> {fire.source} <Age at={fire.fired_at} />
            {fire.session_id && fire.phase === 'fired' ? <> → <a href={href(['projects', project.id, 'sessions', fire.session_id])}>session {fire.session_id.slice(0, 8)}</a></> : null}
            {fire.phase === 'queued' && fire.queue_position !== null ? <> · position {fire.queue_position} in the queue</> : null}
            {fire.reason ? <span class="muted"> · {fire.reason}</span> : null}
          </li>
        ))}
      </ul>
    )}</Show>
  );
}

function TriggerCard({ project, trigger, me, onFired }: { project: Project; trigger: Trigger; me: Me; onFired: () => void }) {
  const [message, setMessage] = useState('');
  const [answer, setAnswer] = useState<FireAnswer | null>(null);
  const [firesKey, setFiresKey] = useState(0);
  const action = useAction();
  const url = trigger.type === 'webhook' ? webhookUrl(project.id, trigger.slug) : null;
  const fire = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const body = message.trim() ? { message: { text: message, source: 'dashboard' } } : {};
      setAnswer(await api<FireAnswer>('POST', `${triggersPath(project, trigger.slug)}/fire`, body));
      setMessage('');
      setFiresKey((k) => k + 1);
      onFired();
    });
  };
  return (
    <section class="card" aria-label={`Trigger ${trigger.slug}`}>
      <h2><code>{trigger.slug}</code> {trigger.name && trigger.name !== trigger.slug ? <span class="muted">{trigger.name}</span> : null} <span class="muted">{trigger.type}</span>
        {!trigger.enabled ? <> <Status value="disabled" /></> : null}{trigger.paused ? <> <Status value="paused" /></> : null}{trigger.dormant ? <> <Status value="dormant" /></> : null}</h2>
      {trigger.paused ? (
        <div class="row">
          <p class="error">{trigger.paused_reason ? `Paused: ${trigger.paused_reason}` : `Paused after ${trigger.consecutive_failures ?? 'repeated'} failed fires; a manifest change or resume brings it back.`}</p>
          {canWrite(me, CAP.triggerUpdate) ? <button type="button" class="secondary" disabled={action.busy} onClick={() => void action.run(async () => { await api('POST', `${triggersPath(project, trigger.slug)}/resume`, {}); onFired(); })}>Resume</button> : null}
        </div>
      ) : null}
      {(trigger.prompt_warnings ?? []).map((warning) => <p class="warning" key={warning}>Prompt: {warning}</p>)}
      <dl class="facts">
        {trigger.type === 'cron' ? <><dt>Schedule</dt><dd><code>{trigger.cron ?? `once at ${trigger.run_at ?? '?'}`}</code> <span class="muted">({trigger.timezone ?? 'UTC'})</span></dd></> : null}
        {url ? <><dt>Webhook URL</dt><dd class="row"><code>{url}</code> <CopyButton text={url} /></dd><dt>Secret</dt><dd><code>{trigger.secret_env ?? '—'}</code>{trigger.secret_configured === false && trigger.enabled
          ? <> <span class="bad">not set</span>: every delivery is refused (409) until it is set on the <a href={href(['projects', project.id, 'secrets'])}>Secrets</a> page</>
          : null}</dd></> : null}
        {trigger.type === 'cron' ? <><dt>Next fire</dt><dd><When at={trigger.next_fire_at} zone={trigger.timezone ?? 'UTC'} /></dd></> : null}
        <dt>Last fired</dt><dd><When at={trigger.last_fired_at} zone={trigger.timezone} />{trigger.last_session_id ? <> → <a href={href(['projects', project.id, 'sessions', trigger.last_session_id])}>session {trigger.last_session_id.slice(0, 8)}</a></> : null}</dd>
        {trigger.agent ? <><dt>Agent</dt><dd>{trigger.agent}</dd></> : null}
      </dl>
      {canWrite(me, CAP.triggerFire) && trigger.enabled && !trigger.paused ? (
        <form class="row" onSubmit={fire}>
          <label class="sr-only" for={`fire-${trigger.slug}`}>Message for {trigger.slug} (optional)</label>
          <input id={`fire-${trigger.slug}`} placeholder="Message (optional)" value={message} onInput={(e) => setMessage((e.target as HTMLInputElement).value)} />
          <button type="submit" class="primary" disabled={action.busy}>Fire now</button>
        </form>
      ) : null}
      {answer ? (
        <p role="status">{answer.status === 'fired'
          ? <>Fired: <a href={href(['projects', project.id, 'sessions', answer.session_id])}>session {answer.session_id.slice(0, 8)}</a></>
          : <>Queued: {answer.reason}</>}</p>
      ) : null}
      <ErrorBox error={action.error} title="Not fired" />
      <details>
        <summary>Recent fires</summary>
        <Fires key={firesKey} project={project} slug={trigger.slug} />
      </details>
    </section>
  );
}

export function TriggersPage({ project, me }: { project: Project; me: Me }) {
  const loaded = useLoad(() => api<TriggerListing>('GET', triggersPath(project)), project.id);
  return (
    <main>
      <h1>Triggers</h1>
      <p class="muted">Times are shown in your zone ({Intl.DateTimeFormat().resolvedOptions().timeZone}) and the trigger's.</p>
      <Show loaded={loaded} what="triggers">{(listing) => (
        <>
          {listing.errors.length ? (
            <section>
              <h2>Invalid entries</h2>
              <ul class="issues">{listing.errors.map((e) => <li key={e.index}><code>triggers[{e.index}]</code>{e.slug ? <> (<code>{e.slug}</code>)</> : null}: {e.messages.join('; ')}</li>)}</ul>
            </section>
          ) : null}
          {listing.triggers.length === 0 ? <p>No triggers. Declare them in the manifest's <code>triggers:</code> list on {project.default_branch}.</p> : null}
          {listing.triggers.map((t) => <TriggerCard key={t.slug} project={project} trigger={t} me={me} onFired={loaded.reload} />)}
        </>
      )}</Show>
    </main>
  );
}
