// Sessions: the list with a start form, and one session's page with its live engine event
// stream (.../events, open to read tokens), stop, abort of the current run, a follow-up prompt
// and links to the change requests it opened.
import { useEffect, useRef, useState } from 'preact/hooks';
import { BOOT_PHASE_LABELS, bootTimelineRows, formatDurationMs } from '../../../src/lib/boot-phases.js';
import type { SerializedChangeRequest, SerializedSession } from '../../../src/lib/rest-shapes.js';
import { api, CAP, canWrite, enc, httpError, storedToken, type Me } from '../api.js';
import { applyEvent, emptyLog, roleOf, sseDataReader, type EventLog } from '../events.js';
import { href, navigate } from '../router.js';
import { Age, ErrorBox, Sha, Show, Status, useAction, useLoad } from '../ui.js';
import type { Project } from './projects.js';
import { sessionTokens } from './usage.js';

/** A session as GET /v1/projects/:id/sessions serializes it (issue 10). */
export type Session = SerializedSession;

const sessionsPath = (project: Project, id?: string) => `/projects/${enc(project.id)}/sessions${id ? `/${enc(id)}` : ''}`;
const STATUSES = ['all', 'provisioning', 'running', 'stopped', 'failed'] as const;
/** A page of a few hundred rows: a trigger firing every minute makes thousands of sessions. */
const SESSIONS_SHOWN = 200;
/** How often the session page reads the session again: while it starts or stops, and while it runs. */
const SETTLING_RELOAD_MS = 2000;
const RUNNING_RELOAD_MS = 5000;

function StartForm({ project }: { project: Project }) {
  const [agent, setAgent] = useState('');
  const [base, setBase] = useState('');
  const [prompt, setPrompt] = useState('');
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const body = { ...(agent.trim() ? { agent: agent.trim() } : {}), ...(base.trim() ? { base_ref: base.trim() } : {}), ...(prompt.trim() ? { prompt } : {}) };
      const { session } = await api<{ session: Session }>('POST', sessionsPath(project), body);
      navigate(['projects', project.id, 'sessions', session.id]);
    });
  };
  return (
    <details class="panel">
      <summary>Start a session</summary>
      <form class="stack" onSubmit={submit}>
        <label for="session-agent">Agent (empty: the manifest's default)</label>
        <input id="session-agent" value={agent} onInput={(e) => setAgent((e.target as HTMLInputElement).value)} />
        <label for="session-base">Base branch (empty: {project.default_branch})</label>
        <input id="session-base" value={base} onInput={(e) => setBase((e.target as HTMLInputElement).value)} />
        <label for="session-prompt">Prompt</label>
        <textarea id="session-prompt" rows={4} value={prompt} onInput={(e) => setPrompt((e.target as HTMLTextAreaElement).value)} />
        <div class="row"><button type="submit" class="primary" disabled={action.busy}>Start</button></div>
        <ErrorBox error={action.error} title="Not started" />
      </form>
    </details>
  );
}

export function SessionsPage({ project, me, status }: { project: Project; me: Me; status: string }) {
  const filter = (STATUSES as readonly string[]).includes(status) ? status : 'all';
  const loaded = useLoad(() => api<{ sessions: Session[]; total: number }>('GET', `${sessionsPath(project)}?status=${filter}&limit=${SESSIONS_SHOWN}`), `${project.id}:${filter}`);
  return (
    <main>
      <h1>Sessions</h1>
      {canWrite(me, CAP.sessionStart) ? <StartForm project={project} /> : null}
      <nav class="filter" aria-label="Status filter">
        {STATUSES.map((s) => <a key={s} href={href(['projects', project.id, 'sessions'], { status: s })} aria-current={s === filter ? 'page' : undefined}>{s}</a>)}
      </nav>
      <Show loaded={loaded} what="sessions">{({ sessions, total }) => sessions.length === 0 ? <p>No sessions{filter === 'all' ? '' : ` ${filter}`}.</p> : (
        <div class="table-wrap">
          {total > sessions.length ? <p class="muted">The newest {sessions.length} of {total} sessions (svc sessions ls lists every one).</p> : null}
          <table>
            <thead><tr><th>Session</th><th>Status</th><th>Agent</th><th>Trigger</th><th>Branch</th><th>Started</th><th>Last activity</th></tr></thead>
            <tbody>
              {[...sessions].sort((a, b) => (b.created_at ?? '').localeCompare(a.created_at ?? '')).map((s) => (
                <tr key={s.id}>
                  <td><a href={href(['projects', project.id, 'sessions', s.id])}><code>{s.id.slice(0, 8)}</code></a></td>
                  <td><Status value={s.status} /></td>
                  <td>{s.agent ?? '—'}</td>
                  <td>{s.trigger ? <a href={href(['projects', project.id, 'triggers'])}>{s.trigger}</a> : '—'}</td>
                  <td><code>{s.branch ?? s.id}</code></td>
                  <td><Age at={s.created_at} /></td>
                  <td><Age at={s.last_activity_at} /></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}</Show>
    </main>
  );
}

/** Follows the engine's event stream while mounted; reconnects after a pause when it ends. */
function useEngineEvents(path: string, live: boolean): { log: EventLog; connection: string } {
  const [log, setLog] = useState<EventLog>(emptyLog);
  const [connection, setConnection] = useState('not connected');
  useEffect(() => {
    if (!live) { setConnection('not connected (the session is not running)'); return; }
    const abort = new AbortController();
    let retry: ReturnType<typeof setTimeout> | undefined;
    const connect = async () => {
      setConnection('connecting…');
      try {
        const res = await fetch(`v1${path}`, { headers: { authorization: `Bearer ${storedToken()}`, accept: 'text/event-stream' }, signal: abort.signal });
        if (!res.ok) throw new Error(`the event stream answered ${res.status}: ${(await httpError(res)).message}`);
        if (!res.body) throw new Error(`the event stream answered ${res.status} with no body`);
        setConnection('live');
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        const read = sseDataReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          const data = read(value);
          const parsed = data.flatMap((d) => { try { return [JSON.parse(d) as unknown]; } catch { return []; } });
          if (parsed.length) setLog((current) => parsed.reduce(applyEvent, current));
        }
        throw new Error('the event stream ended');
      } catch (error) {
        if (abort.signal.aborted) return;
        setConnection(`disconnected (${error instanceof Error ? error.message : String(error)}); retrying in 3 s`);
        retry = setTimeout(() => void connect(), 3000);
      }
    };
    void connect();
    return () => { abort.abort(); clearTimeout(retry); };
  }, [path, live]);
  return { log, connection };
}

function EventStream({ project, session }: { project: Project; session: Session }) {
  const { log, connection } = useEngineEvents(`${sessionsPath(project, session.id)}/events`, session.status === 'running');
  const box = useRef<HTMLDivElement>(null);
  const atBottom = useRef(true);
  useEffect(() => {
    const el = box.current;
    if (el && atBottom.current) el.scrollTop = el.scrollHeight;
  }, [log]);
  return (
    <section aria-label="Engine events">
      <h2>Engine events <span class="muted">{connection}{log.status ? ` · engine ${log.status}` : ''}</span></h2>
      <div class="events" ref={box} tabIndex={0} aria-live="polite"
        onScroll={(e) => { const el = e.currentTarget; atBottom.current = el.scrollTop + el.clientHeight >= el.scrollHeight - 8; }}>
        {log.items.length === 0 ? <p class="muted">No events yet.</p> : log.items.map((item) => {
          if (item.kind === 'tool') {
            return (
              <div key={item.key} class="event event-tool">
                <strong>{item.tool}</strong> {item.toolStatus ? <span class="muted">[{item.toolStatus}]</span> : null} {item.text}
                {item.input ? <pre>$ {item.input}</pre> : null}
                {item.output ? <pre class="muted">{item.output}</pre> : null}
              </div>
            );
          }
          const role = roleOf(log, item);
          return <p key={item.key} class={`event event-${item.kind === 'error' ? 'error' : role ?? 'assistant'}`}>{item.kind === 'error' ? 'Error: ' : role === 'user' ? 'Prompt: ' : item.kind === 'reasoning' ? 'Thinking: ' : ''}{item.text}</p>;
        })}
      </div>
    </section>
  );
}

/** The latest start, phase by phase (a bar each on one time axis), so that a slow start explains itself. */
function BootTimeline({ timeline, live }: { timeline: Session['timeline']; live: boolean }) {
  const { rows, totalMs } = bootTimelineRows(timeline);
  if (!rows.length) return null;
  const span = Math.max(1, ...rows.map((r) => r.offsetMs + (r.durationMs ?? 0)));
  const percent = (ms: number) => `${((100 * ms) / span).toFixed(2)}%`;
  return (
    <section aria-label="Start">
      <h2>Start <span class="muted">{totalMs !== null ? `took ${formatDurationMs(totalMs)}` : live ? 'in progress' : 'did not finish'}</span></h2>
      <div class="table-wrap">
        <table class="timeline">
          <thead><tr><th>Phase</th><th>Took</th><th>At</th><th class="bars"><span class="sr-only">On one time axis</span></th></tr></thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.phase}>
                <td>{BOOT_PHASE_LABELS[r.phase]}</td>
                <td>{r.durationMs !== null ? formatDurationMs(r.durationMs) : live ? 'running' : 'no end'}</td>
                <td class="muted">+{formatDurationMs(r.offsetMs)}</td>
                {/* CSSOM styles (not a style attribute): the dashboard's CSP allows them */}
                <td class="bars"><span class={`bar${r.durationMs === null ? ' open' : ''}`} style={{ marginLeft: percent(r.offsetMs), width: percent(Math.max(r.durationMs ?? 0, span / 200)) }} /></td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

export function SessionPage({ project, sessionId, me }: { project: Project; sessionId: string; me: Me }) {
  const loaded = useLoad(async () => {
    const [{ session }, crs, usage] = await Promise.all([
      api<{ session: Session }>('GET', sessionsPath(project, sessionId)),
      // only this session's: the list of all refreshes every open CR from git, every 5 s
      api<{ change_requests: SerializedChangeRequest[] }>('GET', `/projects/${enc(project.id)}/change-requests?status=all&origin_session_id=${enc(sessionId)}`).then((b) => b.change_requests, () => []),
      sessionTokens(project, sessionId),
    ]);
    return { session, crs, usage };
  }, `${project.id}:${sessionId}`);
  const [prompt, setPrompt] = useState('');
  const [sent, setSent] = useState(false);
  const action = useAction();
  const reload = loaded.reload;
  // follow provisioning -> running, and a requested stop, without a manual reload; while it runs,
  // what only the status says (the engine's model or progress error, its CRs, its tokens) too
  const session = loaded.data?.session;
  const settling = session !== undefined && (session.status === 'provisioning'
    || (session.desired_state === 'stopped' && session.status !== 'stopped' && session.status !== 'failed'));
  const every = settling ? SETTLING_RELOAD_MS : session?.status === 'running' ? RUNNING_RELOAD_MS : 0;
  useEffect(() => {
    if (!every) return;
    const timer = setInterval(reload, every);
    return () => clearInterval(timer);
  }, [every, reload]);

  return (
    <main>
      <p><a href={href(['projects', project.id, 'sessions'])}>← Sessions</a></p>
      <Show loaded={loaded} what="the session">{({ session, crs, usage }) => (
        <>
          <h1>Session <code>{session.id}</code></h1>
          <dl class="facts">
            <dt>Status</dt><dd><Status value={session.status} />{session.reason ? <span class="muted"> {session.reason}</span> : null}{session.sandbox_state ? <span class="muted"> · sandbox {session.sandbox_state}</span> : null}{session.pending_prompts ? <span class="muted"> · {session.pending_prompts} prompt(s) waiting</span> : null}
              {session.message && session.status !== 'running' ? <p class="session-message">{session.message}</p> : null}
              {session.model_error ? <p class="session-message model-error">{session.model_error}</p> : null}
              {session.progress_error ? <p class="session-message progress-error">{session.progress_error}</p> : null}</dd>
            <dt>Agent</dt><dd>{session.agent ?? '—'}{session.model ? <span class="muted"> ({session.model})</span> : null}</dd>
            <dt>Branch</dt><dd><code>{session.branch ?? session.id}</code> from <code>{session.base_ref ?? project.default_branch}</code> <Sha sha={session.base_sha} /></dd>
            <dt>Checkpoint</dt><dd>{session.checkpoint
              ? <><Sha sha={session.checkpoint.sha} /> <Age at={session.checkpoint.at} /> <span class="muted">(uncommitted work, restored on a wake)</span></>
              : <span class="muted">none</span>}</dd>
            <dt>Trigger</dt><dd>{session.trigger ?? '—'}</dd>
            <dt>Started</dt><dd><Age at={session.created_at} /></dd>
            <dt>Last activity</dt><dd><Age at={session.last_activity_at} /></dd>
            <dt>Model tokens</dt><dd>{usage.visible
              ? <>{(usage.input_tokens + usage.output_tokens).toLocaleString('en')} <span class="muted">({usage.input_tokens.toLocaleString('en')} in, {usage.output_tokens.toLocaleString('en')} out, {usage.requests} requests; <a href={href(['projects', project.id, 'usage'])}>usage</a>)</span></>
              : <span class="muted">not shown to this token (needs project.gateway.spend.read)</span>}</dd>
            <dt>Change requests</dt><dd>{crs.length === 0 ? 'none yet' : crs.map((cr, i) => (
              <span key={cr.cr_id}>{i ? ', ' : ''}<a href={href(['projects', project.id, 'change-requests', cr.cr_id])}>#{cr.number} {cr.title}</a></span>
            ))}</dd>
          </dl>
          <BootTimeline timeline={session.timeline} live={session.status === 'provisioning' || session.status === 'running'} />
          {session.initial_prompt ? <section><h2>Initial prompt</h2><p class="prompt">{session.initial_prompt}</p></section> : null}
          <section class="actions" aria-label="Actions">
            {(session.status === 'running' || session.status === 'provisioning') && canWrite(me, CAP.sessionStop) ? (
              <button type="button" class="danger" disabled={action.busy} onClick={() => void action.run(async () => { await api('POST', `${sessionsPath(project, session.id)}/stop`, {}); reload(); })}>Stop</button>
            ) : null}
            {session.status === 'running' && canWrite(me, CAP.sessionStop) ? (
              <button type="button" class="secondary" disabled={action.busy} title="Stop the engine's current run; the session keeps running"
                onClick={() => void action.run(async () => { await api('POST', `${sessionsPath(project, session.id)}/abort`, {}); reload(); })}>Abort run</button>
            ) : null}
            <button type="button" class="secondary" onClick={reload}>Refresh</button>
          </section>
          {canWrite(me, CAP.sessionStart) ? (
            <form class="stack" onSubmit={(e) => {
              e.preventDefault();
              if (!prompt.trim()) return;
              void action.run(async () => { await api('POST', `${sessionsPath(project, session.id)}/prompt`, { text: prompt }); setPrompt(''); setSent(true); reload(); });
            }}>
              <label for="session-followup">Send a prompt{session.status === 'stopped' ? ' (wakes the session)' : ''}</label>
              <textarea id="session-followup" rows={3} value={prompt} onInput={(e) => { setPrompt((e.target as HTMLTextAreaElement).value); setSent(false); }} />
              <div class="row"><button type="submit" disabled={action.busy || !prompt.trim()}>Send</button>{sent ? <span class="ok" role="status">Sent.</span> : null}</div>
            </form>
          ) : null}
          <ErrorBox error={action.error} title="The server refused" />
          <EventStream project={project} session={session} />
        </>
      )}</Show>
    </main>
  );
}
