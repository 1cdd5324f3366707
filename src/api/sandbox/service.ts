// What a sandbox may tell the API (docs/sessions.md "Events, not polling"): that its daemon's
// state changed. The caller is untrusted (the agent holds the sandbox token too), so the service
// takes the session from the token alone (a sandbox pokes only its own session), records nothing
// but the fact (an annotation on that session's Sandbox: the controllers read the daemon's health
// themselves), and bounds it: a budget per session (429 past it) and at most one write in flight
// per session, later events of a burst folded into one more write.
import { sandboxTokenSession, secretsEqual } from '../../lib/sandbox-token.js';
import { KeyedRateLimiter, type RateDecision } from '../../lib/rate-limit.js';
import type { DaemonEventKind } from '../../lib/daemon-events.js';
import { DAEMON_EVENT_ANNOTATION, sandboxName, sessionCredentialsLive, type Session } from '../../resources/index.js';
import { ApiError } from '../errors.js';

/** What the service reads (caches: a flood costs no cluster reads) and writes. */
export interface SandboxEventStore {
  cachedSession(namespace: string, sessionId: string): Session | undefined;
  /** The `sandboxToken` its Session Secret holds now. */
  cachedSandboxToken(namespace: string, sessionId: string): string | undefined;
  /** Merge-patches the annotations of a Sandbox; a Sandbox that is gone is no error. */
  annotateSandbox(namespace: string, name: string, annotations: Record<string, string>): Promise<void>;
}

export interface SandboxEventBudget {
  /** Events a quiet session may send at once (a boot is about 6, a turn 2 or 3). */
  burst: number;
  /** Events per second a session may send over time. */
  perSecond: number;
}

export const DEFAULT_SANDBOX_EVENT_BUDGET: SandboxEventBudget = { burst: 20, perSecond: 2 };

export interface SandboxEventServiceOptions {
  store: SandboxEventStore;
  /** The namespace whose sessions this API serves. */
  namespace: string;
  budget?: SandboxEventBudget;
  now?: () => Date;
}

export class SandboxEventService {
  private readonly budget: KeyedRateLimiter;
  /** Sessions whose annotation is being written, with the latest event that came meanwhile. */
  private readonly writing = new Map<string, { next: DaemonEventKind | null }>();
  private readonly now: () => Date;

  constructor(private readonly options: SandboxEventServiceOptions) {
    const budget = options.budget ?? DEFAULT_SANDBOX_EVENT_BUDGET;
    this.now = options.now ?? (() => new Date());
    this.budget = new KeyedRateLimiter({ ...budget, now: () => this.now().getTime() });
  }

  /** The session whose live sandbox token `authorization` carries; 401 for anything else. */
  authenticate(authorization: string | undefined): string {
    const token = /^Bearer[ ]+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
    const sessionId = token ? sandboxTokenSession(token) : undefined;
    const { store, namespace } = this.options;
    const stored = sessionId ? store.cachedSandboxToken(namespace, sessionId) : undefined;
    if (!token || !sessionId || !stored || !secretsEqual(stored, token) || !sessionCredentialsLive(store.cachedSession(namespace, sessionId))) {
      throw new ApiError(401, 'a sandbox token is required: Authorization: Bearer $SVC_SANDBOX_TOKEN of a live session');
    }
    return sessionId;
  }

  /** Whether the session may send one more event now (every request counts, a bad one too). */
  admit(sessionId: string): RateDecision {
    return this.budget.take(sessionId);
  }

  /** Records that the session's daemon said `kind`: one annotation write, or folded into the one in flight. */
  async record(sessionId: string, kind: DaemonEventKind): Promise<void> {
    const inFlight = this.writing.get(sessionId);
    if (inFlight) {
      inFlight.next = kind;
      return;
    }
    const entry: { next: DaemonEventKind | null } = { next: kind };
    this.writing.set(sessionId, entry);
    try {
      for (let latest = entry.next; latest; latest = entry.next) {
        entry.next = null;
        await this.options.store.annotateSandbox(this.options.namespace, sandboxName(sessionId), { [DAEMON_EVENT_ANNOTATION]: `${this.now().toISOString()} ${latest}` });
      }
    } finally {
      this.writing.delete(sessionId);
    }
  }
}
