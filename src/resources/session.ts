import { z } from 'zod';
import { localRef, statusBase, timestamp } from './common.js';
import type { ObjectIndex, Resource } from './meta.js';
import { BOOT_PHASES } from '../lib/boot-phases.js';

export { BOOT_PHASES, type BootPhaseName } from '../lib/boot-phases.js';

/** SPEC §3.2: the whole enum; only provisioning, running, stopped and failed are written. */
export const SESSION_STATUSES = ['queued', 'branching', 'provisioning', 'running', 'stopped', 'failed', 'completed'] as const;
export const SessionStatusValueSchema = z.enum(SESSION_STATUSES);
export type SessionStatusValue = z.infer<typeof SessionStatusValueSchema>;

export const DESIRED_STATES = ['running', 'stopped'] as const;
export const DesiredStateSchema = z.enum(DESIRED_STATES);
export type DesiredState = z.infer<typeof DesiredStateSchema>;

export const SessionSpecSchema = z
  .object({
    projectRef: localRef('The Project the session works on.'),
    agent: z.string().min(1).optional().describe("Agent the session runs; absent: the project manifest's default_agent, else default (status.agent says which)."),
    baseRef: z.string().min(1).describe('Ref the session branch is cut from.'),
    model: z.string().min(1).optional().describe('Model override <provider>/<model>.'),
    initialPrompt: z.string().optional().describe('First prompt sent to the agent.'),
    desiredState: DesiredStateSchema.default('running').describe('running or stopped.'),
    triggerRef: localRef('The Trigger whose fire created this session.').optional(),
    createdBy: z.string().optional().describe('User id (UUID) of the person or token that created the session.'),
  })
  .describe('Desired state of a Session. metadata.name is the session id (UUID) and the branch name.');
export type SessionSpec = z.infer<typeof SessionSpecSchema>;
/** What a writer must give (fields with defaults optional). */
export type SessionSpecInput = z.input<typeof SessionSpecSchema>;

export const BootPhaseNameSchema = z.enum(BOOT_PHASES);

export const BootPhaseSchema = z
  .object({
    phase: BootPhaseNameSchema.describe('branch, credentials, sandbox (scheduled until its daemon runs), daemon (until it listens), clone, restore, engine (until ready), prompt (the first one sent).'),
    startedAt: timestamp().describe('When the phase started (milliseconds).'),
    endedAt: timestamp().optional().describe('When it ended; absent while it runs.'),
  })
  .describe('One phase of the latest start of the session.');
export type BootPhase = z.infer<typeof BootPhaseSchema>;

export const SessionStatusSchema = z
  .object({
    ...statusBase,
    status: SessionStatusValueSchema.optional().describe('SPEC §3.2 status, for people and the REST API.'),
    branch: z.string().optional().describe('The session branch (the session id).'),
    baseSha: z.string().optional().describe('Commit the session branch was cut from.'),
    sandboxName: z.string().optional().describe('The Sandbox of this session.'),
    agent: z.string().optional().describe("The agent the session runs: spec.agent, else the project manifest's default_agent when it was first seen, else default."),
    reason: z.string().optional().describe('Why the session failed or stopped.'),
    sandboxState: z.string().optional().describe('SPEC §3.3 state of the Sandbox, copied for people and the REST API.'),
    startedAt: timestamp().optional().describe('When the session first ran (its engine took the initial prompt); a wake never sends the initial prompt again.'),
    lastActivityTime: timestamp().optional().describe('Last activity of its sandbox (for the idle sweep).'),
    rootSessionId: z.string().optional().describe('The root engine session of the current sandbox.'),
    checkpoint: z
      .object({ sha: z.string(), at: timestamp() })
      .optional()
      .describe('The latest checkpoint of the uncommitted work (refs/svc/checkpoints/<id>) its sandboxes reported; kept after the sandbox is gone.'),
    daemonReports: z
      .object({
        daemonStartedAt: z.string().describe('The sandbox boot (its daemon start) these reports are of.'),
        checkpoint: z.boolean().describe('Its checkpoint restore (or skip) became an Event.'),
        stalls: z.number().int().min(0).describe('Its engine stalls that became Events.'),
      })
      .optional()
      .describe('What the daemon of the current sandbox boot reported that became Events, so that an operator restart does not repeat them.'),
    branchRetry: z
      .object({
        attempts: z.number().int().min(1).describe('Pushes that failed so far.'),
        nextAttemptAt: timestamp().describe('When the push is tried again.'),
      })
      .optional()
      .describe('The session branch push met a transient failure (the git host away, a cut connection) and is tried again with backoff until the start deadline; BranchReady says why. Gone once it is pushed.'),
    timeline: z.array(BootPhaseSchema).optional().describe('When each phase of the latest start (the first one, or the last wake) started and ended.'),
  })
  .describe('Observed state of a Session.');
export type SessionStatus = z.infer<typeof SessionStatusSchema>;

export type Session = Resource<SessionSpec, SessionStatus>;

/**
 * Annotation the API sets on a session it starts from the default branch: that branch's tip as the
 * start read it (for the manifest). The Session controller cuts the branch there without fetching
 * when its own mirror has the base ref at that commit too; otherwise it fetches, as without it.
 */
export const BASE_SHA_ANNOTATION = 'svc.dev/base-sha';

/** Annotation set with `spec.desiredState: stopped`: why (`Stopped` by a person, `Idle` by the idle sweep). */
export const STOP_REASON_ANNOTATION = 'svc.dev/stop-reason';

/** What the REST listing shows as a session's status (`provisioning` until the controller wrote one). */
export const shownStatus = (session: Pick<Session, 'status'>): SessionStatusValue => session.status?.status ?? 'provisioning';

/**
 * Newest first: later creation first, ties on creation time to the greater name, so that every
 * caller (the reuse target, the session history) orders the same sessions the same way.
 */
export function newestSessionFirst(a: Pick<Session, 'metadata'>, b: Pick<Session, 'metadata'>): number {
  return (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? '') || (b.metadata.name ?? '').localeCompare(a.metadata.name ?? '');
}

/**
 * Sessions by project (`<namespace>/<project>`) and by project and status
 * (`<namespace>/<project>/<status>`): the session listing reads one key, whatever the history.
 */
export const SESSIONS_BY_PROJECT_INDEX: ObjectIndex<Session> = {
  name: 'sessions-by-project',
  keys: (session) => {
    const project = `${session.metadata.namespace ?? ''}/${session.spec.projectRef.name}`;
    return [project, `${project}/${shownStatus(session)}`];
  },
};
