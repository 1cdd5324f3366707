// `svc sessions start|ls|show|stop|abort|prompt|logs` over the REST API (docs/sessions.md). The project
// comes from --project, else SVC_PROJECT_ID, else the `svc projects link`ed repository.
// Formatting is pure.
import type { Command } from 'commander';
import { BOOT_PHASE_LABELS, bootTimelineRows, formatDurationMs, type BootPhaseView } from '../../lib/boot-phases.js';
import { engineErrorText, modelError } from '../../lib/model-error.js';
import type { SerializedSession } from '../../lib/rest-shapes.js';
import { SseSplitter, eventData } from '../../lib/sse.js';
import { ApiCallError, apiAction, createApiClient, unreachableCause, type ApiClient } from '../api-client.js';
import { readTextFile } from '../input.js';
import { CliError, EXIT, examples, formatTable, printJson, printLines, setExitCode, type ExitCode } from '../output.js';
import { PROJECT_OPTION } from './cr.js';
import { resolveProjectId } from './link.js';
import { clipText } from '../../lib/clip.js';
import { UUID } from '../../lib/uuid.js';

/** A session as the REST API serializes it. */
export type SessionView = SerializedSession;


/** What became of a prompt: every prompt waits on the session until the operator hands it to the engine. */
export function promptQueuedLine(session: Pick<SessionView, 'id' | 'status'>): string {
  const queued = `Prompt queued for session ${session.id} (${session.status})`;
  if (session.status === 'running') return `${queued}; its engine gets it next (svc sessions logs ${session.id} follows it).`;
  if (session.status === 'stopped') return `${queued}; the session is woken to take it.`;
  return `${queued}; it is delivered once the session runs.`;
}

/** `total`: how many match, when the listing was cut to the newest few (--limit). */
export function formatSessionList(sessions: SessionView[], total = sessions.length): string[] {
  if (!sessions.length) return ['No sessions.'];
  const table = formatTable(
    ['id', 'status', 'agent', 'base', 'trigger', 'last activity'],
    sessions.map((s) => [s.id, s.status + (s.reason ? ` (${s.reason})` : ''), s.agent, s.base_ref, s.trigger ?? '-', s.last_activity_at ?? '-']),
  );
  return total > sessions.length ? [...table, `(the newest ${sessions.length} of ${total}; a larger --limit lists more)`] : table;
}

/**
 * The boot timeline: one line per phase, its duration and when it started after the first. A
 * phase without an end is running while the session starts (`live`), else it never ended (failed, stopped).
 */
export function formatTimeline(timeline: readonly BootPhaseView[], live = true): string[] {
  const { rows, startedAt, totalMs } = bootTimelineRows(timeline);
  if (!rows.length) return [];
  const width = Math.max(...rows.map((r) => BOOT_PHASE_LABELS[r.phase].length));
  const open = live ? 'running' : 'no end';
  return [
    `Start:     ${totalMs !== null ? `took ${formatDurationMs(totalMs)}` : live ? 'in progress' : 'did not finish'} (from ${startedAt})`,
    ...rows.map((r) => `  ${BOOT_PHASE_LABELS[r.phase].padEnd(width)}  ${(r.durationMs === null ? open : formatDurationMs(r.durationMs)).padStart(10)}  at +${formatDurationMs(r.offsetMs)}`),
  ];
}

/** Who made a session: a person's user id, a trigger (whose fires have no person), or both. */
function createdBy(s: SessionView): string {
  if (!s.trigger) return s.created_by ?? '-';
  return s.created_by ? `${s.created_by} (trigger ${s.trigger})` : `trigger ${s.trigger}`;
}

export function formatSession(s: SessionView): string[] {
  const lines = [
    `Session:   ${s.id}`,
    `Status:    ${s.status}${s.reason ? ` (${s.reason})` : ''}${s.desired_state !== 'running' ? `, desired ${s.desired_state}` : ''}`,
  ];
  // why it is not running, where people look (a failed engine's last error, a push's git error)
  if (s.message && s.status !== 'running') lines.push(`Message:   ${s.message}`);
  if (s.model_error) lines.push(`Model:     ${s.model_error}`);
  if (s.progress_error) lines.push(`Engine:    ${s.progress_error}`);
  lines.push(
    `Sandbox:   ${s.sandbox_state ?? '-'}`,
    `Agent:     ${s.agent}${s.model ? ` (${s.model})` : ''}`,
    `Branch:    ${s.branch ?? '(not pushed yet)'} from ${s.base_ref}${s.base_sha ? ` at ${s.base_sha.slice(0, 12)}` : ''}`,
    `Checkpoint: ${s.checkpoint ? `${s.checkpoint.sha.slice(0, 12)} at ${s.checkpoint.at} (uncommitted work, restored on a wake)` : '-'}`,
    `Created:   ${s.created_at ?? '-'} by ${createdBy(s)}`,
    `Activity:  ${s.last_activity_at ?? '-'}`,
  );
  if (s.pending_prompts) lines.push(`Pending:   ${s.pending_prompts} prompt(s) waiting for the engine`);
  lines.push(...formatTimeline(s.timeline, s.status === 'provisioning' || s.status === 'running'));
  if (s.initial_prompt) lines.push('', 'Initial prompt:', ...s.initial_prompt.split('\n').map((l) => `  ${l}`));
  return lines;
}

/** One engine event (SSE `data:` JSON) as a readable line, or null for noise. */
export function formatEngineEvent(event: { type?: string; properties?: Record<string, unknown> }): string | null {
  const type = event.type ?? 'event';
  const p = event.properties ?? {};
  if (type === 'server.heartbeat') return null;
  const part = p.part as { type?: string; text?: string; tool?: string; state?: { status?: string; input?: unknown } } | undefined;
  if (type === 'message.part.updated' && part) {
    if (part.type === 'text' && typeof part.text === 'string') return `text: ${part.text}`;
    if (part.type === 'tool') return `tool ${part.tool ?? '?'} ${part.state?.status ?? ''} ${part.state?.input ? JSON.stringify(part.state.input) : ''}`.trim();
    return null;
  }
  if (type === 'session.status') {
    // a retry says why (opencode retries a model call forever), not a bare status
    const retrying = modelError(p.status);
    return retrying ? `status: "retry": ${retrying}` : `status: ${JSON.stringify((p.status as { type?: string } | undefined)?.type ?? p.status)}`;
  }
  if (type === 'session.error') return `error: ${engineErrorText(p.error) ?? 'the engine reported an error'}`;
  const detail = JSON.stringify(p);
  return `${type}${detail && detail !== '{}' ? ` ${clipText(detail, 201)}` : ''}`;
}

interface Context { client: ApiClient; base: string }

async function context(projectOption: string | undefined): Promise<Context> {
  const client = createApiClient();
  return { client, base: `/projects/${await resolveProjectId(client, projectOption)}/sessions` };
}

function sessionId(value: string): string {
  if (!UUID.test(value)) throw new CliError(`${JSON.stringify(value)} is not a session id (a UUID): see svc sessions ls`);
  return value.toLowerCase();
}

const act = apiAction;

function show(session: SessionView, json: boolean | undefined): void {
  if (json) printJson(session);
  else printLines(formatSession(session));
}

/** How often `svc sessions logs` asks again while the session's sandbox starts. */
const NOT_READY_RETRY_MS = 1000;

/**
 * The events stream once the session's sandbox serves it: while it starts (503: a session still
 * provisioning, or an API loading its caches) it asks again, saying once on stderr what it waits
 * for. A session that stops or fails meanwhile answers 409, which ends the wait.
 */
async function openEvents(client: ApiClient, path: string): Promise<Response> {
  let said = false;
  for (;;) {
    try {
      return await client.stream(path, 'text/event-stream');
    } catch (error) {
      if (!(error instanceof ApiCallError) || error.status !== 503) throw error;
      if (!said) process.stderr.write(`svc: waiting: ${error.message}\n`);
      said = true;
      await new Promise((resolve) => setTimeout(resolve, NOT_READY_RETRY_MS));
    }
  }
}

interface SessionEnd { text: string; code: ExitCode }

/**
 * Why a followed stream ended, when the session did: stopped (the follow is over) or failed
 * (exit 1); null while it is meant to run (the API or its sandbox went away: follow again).
 */
async function sessionEnded(client: ApiClient, sessionPath: string): Promise<SessionEnd | null> {
  let session: SessionView;
  try {
    ({ session } = await client.request<{ session: SessionView }>('GET', sessionPath));
  } catch {
    return null;
  }
  const why = `${session.reason ? ` (${session.reason})` : ''}${session.message ? `: ${session.message}` : ''}`;
  if (session.status === 'failed') return { text: `session ${session.id} failed${why}`, code: EXIT.invalid };
  // stopped but wanted running: a prompt is waking it, so the follow is not over
  if (session.desired_state !== 'stopped') return null;
  return { text: `session ${session.id} ${session.status === 'stopped' ? `stopped${why}` : 'is being stopped'}`, code: EXIT.ok };
}

/** Follows GET .../events (the engine's SSE stream) and prints each event until interrupted or the session ends. */
async function followEvents(client: ApiClient, sessionPath: string, json: boolean | undefined): Promise<void> {
  const res = await openEvents(client, `${sessionPath}/events`);
  const splitter = new SseSplitter();
  try {
    for await (const chunk of res.body!) {
      for (const data of eventData(splitter.push(chunk as Uint8Array))) {
        let event: { type?: string; properties?: Record<string, unknown> };
        try { event = JSON.parse(data) as typeof event; } catch { continue; }
        if (json) { process.stdout.write(`${data}\n`); continue; }
        const line = formatEngineEvent(event);
        if (line) process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
      }
    }
  } catch (error) {
    // the session stopped or failed, or the API went away, or the session's sandbox with its stream
    const ended = await sessionEnded(client, sessionPath);
    if (!ended) throw new CliError(`the event stream was cut off: ${unreachableCause(error)}; run svc sessions show to see the session, then follow it again`, EXIT.invalid);
    return sayEnded(ended);
  }
  const ended = await sessionEnded(client, sessionPath);
  if (ended) sayEnded(ended);
}

/** The end of a follow because the session ended: said on stderr, exit 0 for a stop, 1 for a failure. */
function sayEnded(ended: SessionEnd): void {
  process.stderr.write(`svc: ${ended.text}\n`);
  setExitCode(ended.code);
}

export function registerSessionsCommands(program: Command): void {
  const sessions = program.command('sessions').description('sessions: an agent working on its own branch in a sandbox (SVC_API_URL, SVC_CLI_TOKEN)');
  sessions.addHelpText('after', examples([
    ['svc sessions start --prompt "add a README"', 'start a session on the default branch'],
    ['svc sessions start --prompt-file task.md', 'a long first prompt from a file (- reads stdin)'],
    ['svc sessions ls --status running', 'the running sessions of the project'],
    ['svc sessions logs ID', "follow the engine's events"],
    ['svc sessions logs ID --daemon', "why a failed session failed: its sandbox's kept log"],
    ['svc sessions abort ID', "stop the engine's current run (the session keeps running)"],
    ['svc sessions prompt ID "now add tests"', 'a follow-up prompt (wakes a stopped session)'],
  ]));

  sessions.command('start')
    .description('start a session: a branch named after it, a sandbox running the agent')
    .option('--agent <name>', "agent (default: the manifest's default_agent, else default)")
    .option('--base <ref>', "ref to branch from (default: the project's default branch)")
    .option('--prompt <text>', 'the first prompt')
    .option('--prompt-file <path>', 'the first prompt from a file (- reads stdin)')
    .option('--model <provider/model>', 'model override')
    .option(...PROJECT_OPTION)
    .option('--json', 'print the session as JSON')
    .option('-q, --quiet', 'print only the session id (for scripts: ID=$(svc sessions start -q ...))')
    .action(act(async (opts: { agent?: string; base?: string; prompt?: string; promptFile?: string; model?: string; project?: string; json?: boolean; quiet?: boolean }) => {
      if (opts.prompt !== undefined && opts.promptFile !== undefined) throw new CliError('give the first prompt once: --prompt TEXT or --prompt-file PATH', EXIT.usage);
      const prompt = opts.promptFile !== undefined ? await readTextFile(opts.promptFile, '--prompt-file') : opts.prompt;
      const ctx = await context(opts.project);
      const body = { agent: opts.agent, base_ref: opts.base, prompt, model: opts.model };
      const { session } = await ctx.client.request<{ session: SessionView }>('POST', ctx.base, body);
      if (opts.json) printJson(session);
      else if (opts.quiet) printLines([session.id]);
      else printLines([`Started session ${session.id} (${session.status}); follow it with: svc sessions logs ${session.id}`]);
    }));

  sessions.command('ls')
    .description('list the sessions of the project, newest first')
    .option('--status <status>', 'provisioning, running, stopped, failed or all', 'all')
    .option('--limit <n>', 'only the newest N (default: every one)')
    .option(...PROJECT_OPTION)
    .option('--json', 'print JSON')
    .action(act(async (opts: { status: string; limit?: string; project?: string; json?: boolean }) => {
      const ctx = await context(opts.project);
      const query = `?status=${encodeURIComponent(opts.status)}${opts.limit === undefined ? '' : `&limit=${encodeURIComponent(opts.limit)}`}`;
      const { sessions: list, total } = await ctx.client.request<{ sessions: SessionView[]; total?: number }>('GET', `${ctx.base}${query}`);
      if (opts.json) printJson(list);
      else printLines(formatSessionList(list, total));
    }));

  sessions.command('show')
    .description('one session: status, sandbox, branch, agent')
    .argument('<id>', 'session id')
    .option(...PROJECT_OPTION)
    .option('--json', 'print JSON')
    .action(act(async (id: string, opts: { project?: string; json?: boolean }) => {
      const ctx = await context(opts.project);
      show((await ctx.client.request<{ session: SessionView }>('GET', `${ctx.base}/${sessionId(id)}`)).session, opts.json);
    }));

  sessions.command('stop')
    .description('stop a session: its sandbox goes, its branch stays (a prompt wakes it)')
    .argument('<id>', 'session id')
    .option(...PROJECT_OPTION)
    .option('--json', 'print JSON')
    .action(act(async (id: string, opts: { project?: string; json?: boolean }) => {
      const ctx = await context(opts.project);
      show((await ctx.client.request<{ session: SessionView }>('POST', `${ctx.base}/${sessionId(id)}/stop`)).session, opts.json);
    }));

  sessions.command('abort')
    .description("abort the engine's current run; the session keeps running and takes the next prompt")
    .argument('<id>', 'session id')
    .option(...PROJECT_OPTION)
    .option('--json', 'print JSON')
    .action(act(async (id: string, opts: { project?: string; json?: boolean }) => {
      const ctx = await context(opts.project);
      const { session } = await ctx.client.request<{ session: SessionView }>('POST', `${ctx.base}/${sessionId(id)}/abort`);
      if (opts.json) printJson(session);
      else printLines([`Aborted the current run of session ${session.id} (${session.status}).`]);
    }));

  sessions.command('prompt')
    .description('send a follow-up prompt to the root engine session (wakes a stopped session first)')
    .argument('<id>', 'session id')
    .argument('[text]', 'the prompt (or --file)')
    .option('--file <path>', 'the prompt from a file (- reads stdin)')
    .option(...PROJECT_OPTION)
    .option('--json', 'print JSON')
    .action(act(async (id: string, given: string | undefined, opts: { file?: string; project?: string; json?: boolean }) => {
      if (given === undefined && opts.file === undefined) throw new CliError('no prompt given: pass it as TEXT after the session id, or --file PATH (- reads stdin)', EXIT.usage);
      if (given !== undefined && opts.file !== undefined) throw new CliError('give the prompt once: as TEXT after the session id, or --file PATH', EXIT.usage);
      const text = opts.file !== undefined ? await readTextFile(opts.file, '--file') : given!;
      const ctx = await context(opts.project);
      const { session } = await ctx.client.request<{ session: SessionView }>('POST', `${ctx.base}/${sessionId(id)}/prompt`, { text });
      if (opts.json) printJson(session);
      else printLines([promptQueuedLine(session)]);
    }));

  sessions.command('logs')
    .description("follow the engine's event stream as readable lines until Ctrl-C; --daemon: a failed session's sandbox log")
    .argument('<id>', 'session id')
    .option(...PROJECT_OPTION)
    .option('--json', 'print each event as one JSON line')
    .option('--daemon', "print the log svc kept of a failed session's sandbox (svc-agent and its engine; the end of it, secrets masked)")
    .action(act(async (id: string, opts: { project?: string; json?: boolean; daemon?: boolean }) => {
      const ctx = await context(opts.project);
      if (opts.daemon) {
        process.stdout.write(await ctx.client.text(`${ctx.base}/${sessionId(id)}/daemon-log`));
        return;
      }
      await followEvents(ctx.client, `${ctx.base}/${sessionId(id)}`, opts.json);
    }));
}
