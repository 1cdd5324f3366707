// The Session controller (on the runtime's object reconciler; the only writer of Session
// status). observe (observe.ts: the Project, the Sandbox, which Secrets exist, the daemon's
// health) -> decideSession (decide.ts, pure: steps, the Sandbox child, status, Events) ->
// the steps (steps.ts: push the session branch with the project's own credentials, write the
// Session Secret and the CLI token, deliver pending prompts, stop an idle session) -> the
// Sandbox -> one status write. The CLI token lives with the API tokens: in the Session's
// namespace it is garbage collected with it (owner reference); in another one a finalizer
// revokes it, whoever deletes the Session and whenever. Another finalizer removes the session's
// refs from the project's repository (refs.ts).
import {
  annotationsChanged, anyOf, generationChanged, labelsChanged, objectController, type ControllerDefinition,
} from '../../src/runtime/index.js';
import { SANDBOX, SESSION, type SandboxProvider, type Session } from '../../src/resources/index.js';
import type { StartRetryPolicy } from '../../src/lib/start-retry.js';
import { SharedHealthReads, type SandboxResync } from '../../src/sandbox/index.js';
import { decideSession, type SandboxSettings, type SessionFacts, type SessionStep } from './decide.js';
import { observeSession } from './observe.js';
import { cleanUpSessionRefs } from './refs.js';
import { performSessionStep, revokeCliTokens } from './steps.js';

export { SESSION_CLI_CAPABILITIES } from './steps.js';

/** The default idle timeout (issue 10: 30 minutes). */
export const DEFAULT_IDLE_TIMEOUT_MS = 30 * 60_000;
/** Revokes the session's CLI token when it lives in another namespace than the Session. */
export const CLI_TOKEN_FINALIZER = 'svc.dev/cli-token';
/** Deletes the session's checkpoint ref, and its branch unless an open change request uses it, from the project's repository. */
export const GIT_REFS_FINALIZER = 'svc.dev/git-refs';

export interface SessionControllerOptions {
  /** Directory of the bare mirrors (shared with the Project controller). */
  mirrorDir: string;
  /** The API base the sandboxes use (SVC_SANDBOX_API_URL), ending in /v1. */
  apiUrl: string;
  /** SVC_REPO_URL for a project (the git gateway). */
  repoUrl: SandboxSettings['repoUrl'];
  provider: SandboxProvider;
  /** Namespace of the API token Secrets (SVC_NAMESPACE). */
  tokenNamespace: string;
  /** Idle timeout when the Project sets none. */
  idleTimeoutMs?: number;
  /** How often to look without being told (default DEFAULT_SANDBOX_RESYNC). */
  resync?: SandboxResync;
  /** How long a transient failure of the branch push is waited out (default DEFAULT_START_RETRY). */
  startRetry?: StartRetryPolicy;
  /** Health reads shared with the Sandbox controller (default: this controller's own). */
  healthReads?: SharedHealthReads;
  now?: () => Date;
}

export function sessionController(options: SessionControllerOptions): ControllerDefinition {
  const settings: SandboxSettings = { apiUrl: options.apiUrl, repoUrl: options.repoUrl, provider: options.provider, resync: options.resync, startRetry: options.startRetry };
  const { tokenNamespace, mirrorDir } = options;
  const idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  const clock = options.now ?? (() => new Date());
  const healthReads = options.healthReads ?? new SharedHealthReads();
  return objectController<Session, SessionFacts, SessionStep>({
    name: 'session',
    for: SESSION,
    owns: [SANDBOX],
    // starts wait mostly on the cluster and git, not on this process: ten at once should not queue
    concurrency: 16,
    // spec (stop, wake), annotations (pending prompts, the stop reason), labels; its own status writes do not wake it
    predicates: [anyOf(generationChanged, annotationsChanged, labelsChanged)],
    finalizer: [
      {
        name: CLI_TOKEN_FINALIZER,
        appliesTo: (session) => session.metadata.namespace !== tokenNamespace,
        finalize: (session, ctx) => revokeCliTokens(ctx.client, tokenNamespace, session.metadata.name!),
      },
      { name: GIT_REFS_FINALIZER, finalize: (session, ctx) => cleanUpSessionRefs(session, ctx, mirrorDir, clock) },
    ],
    now: options.now,
    observe: (session, ctx) => observeSession(session, ctx, { tokenNamespace, idleTimeoutMs, healthReads }),
    compute: (session, facts, now) => decideSession(session, facts, settings, now),
    async perform(session, step, ctx, facts) {
      const startedAt = clock().toISOString();
      const result = await performSessionStep(session, step, ctx, facts, { mirrorDir, tokenNamespace });
      // when each step ran: the controller's half of the boot timeline
      const stepTimes = { ...facts.stepTimes, [step.kind]: { startedAt, endedAt: clock().toISOString() } };
      return { ...result, observed: { ...result.observed, stepTimes } };
    },
  });
}
