// The daemon's GET /svc/health answer (SPEC §4.5, docs/daemon.md): one schema for the writer
// (svc-agent builds it) and the readers (the Sandbox and Session controllers parse it). Objects
// are loose: a field a newer daemon adds passes through to readers that know it.
import { z } from 'zod';
import { httpCall } from './http-call.js';

const nullableString = z.string().nullable();

export const DAEMON_STATES = ['starting', 'cloning', 'restoring', 'ready', 'failed'] as const;
export const ENGINE_STATES = ['stopped', 'booting', 'ready', 'restarting', 'failed'] as const;

/** The session's checkpoint (DESIGN §8.3, docs/daemon.md). */
export const DaemonCheckpointSchema = z.looseObject({
  enabled: z.boolean(),
  ref: z.string(),
  /** the latest checkpoint the sandbox knows (what Session status `checkpoint: { sha, at }` shows) */
  sha: nullableString,
  at: nullableString,
  /** restored on boot (Event CheckpointRestored) */
  restored: z.object({ sha: z.string(), at: z.string() }).nullable(),
  /** found on boot and left alone (Event CheckpointSkipped with the reason) */
  skipped: z.object({ sha: nullableString, reason: z.string() }).nullable(),
  conversation: z.looseObject({
    restored: z.object({ sha: z.string(), session_id: z.string(), messages: z.number().int() }).nullable(),
    error: nullableString,
  }),
  writes: z.number().int(),
  last_error: z.object({ at: z.string(), message: z.string() }).nullable(),
});
export type DaemonCheckpoint = z.infer<typeof DaemonCheckpointSchema>;

/** The engine's progress (docs/daemon.md "Progress"). */
export const DaemonProgressSchema = z.looseObject({
  /** stalled from the moment the daemon found the engine stuck until the restarted engine is ready */
  state: z.enum(['ok', 'stalled']),
  reason: nullableString,
  since: z.string(),
  busy: z.boolean(),
  last_event_at: nullableString,
  /** stalls found since the daemon started: a new one is a new Event */
  stalls: z.number().int(),
  last_stall: z.object({ at: z.string(), reason: z.string() }).nullable(),
});
export type DaemonProgress = z.infer<typeof DaemonProgressSchema>;

/**
 * When each phase of this daemon's boot happened (RFC 3339, milliseconds; null: not yet, or not
 * at all: no clone without auto-clone, no restore with checkpoints off). With `daemon.started_at`
 * and `engine.initial_prompt_sent_at`, the sandbox's half of the Session's boot timeline.
 */
const bootMarks = {
  listening_at: nullableString.optional(),
  clone_started_at: nullableString.optional(),
  clone_ended_at: nullableString.optional(),
  restore_started_at: nullableString.optional(),
  restore_ended_at: nullableString.optional(),
  /** the first engine start of this daemon (after clone and restore) */
  engine_started_at: nullableString.optional(),
  /** the first time its engine was ready (restarts later do not move it) */
  engine_ready_at: nullableString.optional(),
};
export const DaemonBootSchema = z.looseObject(bootMarks);
export type DaemonBoot = z.infer<typeof DaemonBootSchema>;
export type DaemonBootMark = keyof typeof bootMarks;

export const DaemonHealthSchema = z.looseObject({
  /** ok once daemon and engine are ready; failed when either gave up. */
  status: z.enum(['ok', 'starting', 'failed']),
  daemon: z.looseObject({
    state: z.enum(DAEMON_STATES),
    error: nullableString,
    pid: z.number().int().optional(),
    started_at: z.string().optional(),
    /** a start step waiting out a transient failure (docs/daemon.md "Start"); absent from older daemons */
    retry: z.object({ step: z.string(), attempt: z.number().int(), cause: z.string(), error: z.string(), next_attempt_at: z.string() }).nullable().optional(),
    /** the start step that gave up (`clone`, `checkpoint fetch`) while `state` is failed; absent from older daemons */
    failed_step: nullableString.optional(),
  }),
  engine: z.looseObject({
    state: z.enum(ENGINE_STATES),
    restarts: z.number().int(),
    last_exit: z.object({ code: z.number().int().nullable(), signal: nullableString, at: z.string() }).nullable().optional(),
    next_restart_at: nullableString.optional(),
    /** the cause of the engine's last failure (ENOENT, an exit with its last stderr lines), redacted */
    last_error: nullableString,
    /** the engine's last stderr lines, redacted; absent from older daemons */
    stderr_tail: z.array(z.string()).optional(),
    /** "cannot reach the model: ..." while the engine retries a model call; absent from older daemons */
    model_error: nullableString.optional(),
    root_session_id: nullableString,
    initial_prompt_sent_at: nullableString,
    /** this daemon has an initial prompt the engine has not taken yet: other prompts wait; absent from older daemons */
    initial_prompt_pending: z.boolean().optional(),
    /** why opening the root session or sending the initial prompt failed (svc-agent tries again); absent from older daemons */
    root_session_error: nullableString.optional(),
    /** why the root session's latest turn failed (the engine's error: a model it does not know, a provider's refusal), until another turn starts; absent from older daemons */
    turn_error: nullableString.optional(),
    /** The root engine session's run, as the engine reports it (idle, busy, retry with attempt and message). */
    run: z.looseObject({ type: z.string().optional(), attempt: z.number().optional(), message: z.string().optional() }).nullable(),
  }),
  repository: z.object({ url: nullableString, branch: nullableString, commit: nullableString }).optional(),
  runtime_env_names: z.array(z.string()).optional(),
  /** absent from daemons older than checkpoints */
  checkpoint: DaemonCheckpointSchema.optional(),
  /** absent from daemons older than the progress watch */
  progress: DaemonProgressSchema.optional(),
  /** absent from daemons older than the boot timeline */
  boot: DaemonBootSchema.optional(),
  last_activity_at: nullableString,
});
export type DaemonHealth = z.infer<typeof DaemonHealthSchema>;

/** A run in progress (busy, or retrying a model call): the session is never idle then. */
export function engineBusy(health: DaemonHealth): boolean {
  const type = health.engine.run?.type;
  return type === 'busy' || type === 'retry';
}

/**
 * The largest health answer read (svc-agent's is a few KB): the sandbox is untrusted, and its
 * agent, of the same uid as svc-agent, can make it answer anything.
 */
export const DAEMON_HEALTH_MAX_BYTES = 256 * 1024;

/**
 * Reads the daemon's health at `address` (host:port); null when it does not answer in time or
 * answers something else than this schema (a probe sent just as the port opens can hang, so it
 * always has a timeout).
 */
export async function readDaemonHealth(address: string, timeoutMs = 3000): Promise<DaemonHealth | null> {
  try {
    const res = await httpCall(`http://${address}/svc/health`, { timeoutMs, maxBytes: DAEMON_HEALTH_MAX_BYTES });
    if (res.status < 200 || res.status >= 300) return null;
    const parsed = DaemonHealthSchema.safeParse(JSON.parse(res.body));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
