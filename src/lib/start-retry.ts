// The start of a session meets the API restarting, the git host away, a connection cut:
// transient failures waited out with backoff until the start deadline, by svc-agent (the clone
// through the git gateway, the checkpoint fetch) and by the Session controller (the session
// branch push). Anything else (a missing base ref, a refused credential, an unknown repository)
// fails the start at once. Pure: the caller feeds it what failed and when.

/** Steps of the start that talk to the API or the git host, named in every failure. */
export type StartStep = 'clone' | 'checkpoint fetch' | 'session branch push';

export interface StartRetryPolicy {
  /** From the start (the daemon's; the Session's creation for its branch push): past it, a transient failure fails the start too (SVC_START_DEADLINE_MS). */
  deadlineMs: number;
  /** First wait, doubled per attempt (SVC_START_RETRY_BACKOFF_MS). */
  backoffMs: number;
  /** Longest wait (SVC_START_RETRY_MAX_BACKOFF_MS): short, so a returning API is used at once. */
  maxBackoffMs: number;
}

export const DEFAULT_START_RETRY: StartRetryPolicy = { deadlineMs: 300_000, backoffMs: 500, maxBackoffMs: 5_000 };

export interface StartFailure {
  step: StartStep;
  /** What failed, as git or the credential call said it (redacted). */
  message: string;
  /** Why it is worth waiting out (transientCause of what failed underneath), or null. */
  cause: string | null;
}

/** Why a failure is worth waiting out, or null when it is not (it stays until someone acts). */
export function transientCause(message: string): string | null {
  // a refusal names itself: waiting does not change it, even when it came through the gateway
  if (PERMANENT.some((p) => p.test(message))) return null;
  return TRANSIENT.find(([pattern]) => pattern.test(message))?.[1] ?? null;
}

const PERMANENT = [
  /authentication failed|could not read (username|password)|permission denied|host key verification failed/i,
  /returned error: (400|401|403|404|410|413)\b|answered (400|401|403|404|410)\b/i,
  // a quoted name stops at its quote: `.*` here was quadratic in git's stderr, which a branch's paths reach
  /repository ('[^'\n]*' )?not found|does not appear to be a git repository|base ref "[^"\n]*" was not found/i,
];

const TRANSIENT: Array<[RegExp, string]> = [
  [/returned error: 503\b|answered 503\b/i, 'the API is starting (503)'],
  [/returned error: (429|500|502|504)\b|answered (429|500|502|504)\b/i, 'the API answered with a temporary error'],
  [/the project repository cannot be reached/i, 'the git host cannot be reached'],
  [/could not resolve host|failed to connect|couldn't connect|connection refused|ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|no route to host|network is unreachable/i, 'the API or the git host is unreachable'],
  [/timed out|operation too slow|ETIMEDOUT|UND_ERR_CONNECT_TIMEOUT|TimeoutError|aborted due to timeout/i, 'the API or the git host did not answer in time'],
  [/early EOF|hung up unexpectedly|unexpected disconnect|RPC failed|connection reset|ECONNRESET|EPIPE|socket hang up|empty reply from server|transfer closed|closed connection|other side closed|SocketError|fetch failed|invalid index-pack output|HTTP\/2 stream/i, 'the connection was cut off'],
];

export type StartDecision =
  | { retryInMs: number; cause: string }
  | { fail: string };

/**
 * After attempt `attempt` (1-based) of a step failed at `now`: wait and try again while the
 * failure is transient and the next attempt starts before the deadline (counted from
 * `startedAt`, the daemon's start or the Session's creation); else fail, saying which step failed and why.
 */
export function nextStartAttempt(failure: StartFailure, attempt: number, startedAt: number, now: number, policy: StartRetryPolicy): StartDecision {
  const { cause } = failure;
  if (cause === null) return { fail: `${failure.step} failed: ${failure.message}` };
  const waitMs = Math.min(policy.maxBackoffMs, policy.backoffMs * 2 ** Math.min(attempt - 1, 30));
  const elapsed = now - startedAt;
  if (elapsed + waitMs > policy.deadlineMs) {
    return { fail: `${failure.step} failed: ${cause}, still after ${attempt} attempt${attempt === 1 ? '' : 's'} over ${seconds(elapsed)} (start deadline ${seconds(policy.deadlineMs)}); the last: ${failure.message}` };
  }
  return { retryInMs: waitMs, cause };
}

/**
 * The Sandbox's and Session's `reason` for a start that gave up at `step`: the step in one word
 * (`clone` → `CloneFailed`, `checkpoint fetch` → `CheckpointFetchFailed`); the message says why.
 */
export function startStepReason(step: string): string {
  return `${step.split(/\s+/).filter(Boolean).map((w) => w[0]!.toUpperCase() + w.slice(1)).join('')}Failed`;
}

function seconds(ms: number): string {
  return `${Math.round(ms / 1000)} s`;
}
