// svc-agent tells the API that its state changed (docs/sessions.md "Events, not polling"):
//   POST {SVC_API_URL}/sandbox/events   Authorization: Bearer $SVC_SANDBOX_TOKEN   {"event": "<kind>"}
//   202 {"recorded": true}; 400 an unknown kind; 401 not a live session's sandbox token;
//   429 {"error"} with Retry-After (seconds) past the session's budget.
// The API only records that something happened (an annotation on the session's Sandbox); the
// controllers wake on it and read the daemon's health themselves, so the kind is a hint for
// people reading the annotation, never a fact anyone acts on. No zod here: svc-agent imports
// this file, and its start waits for every module it loads (the API has the body's schema).

/** What changed: the daemon and its engine came up, a turn started or ended, something failed, anything else. */
export const DAEMON_EVENT_KINDS = ['starting', 'ready', 'busy', 'idle', 'failed', 'changed'] as const;
export type DaemonEventKind = (typeof DAEMON_EVENT_KINDS)[number];

/** The route under SVC_API_URL (which ends in /v1). */
export const DAEMON_EVENTS_PATH = '/sandbox/events';
