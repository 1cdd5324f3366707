// The Session controller's decision, pure: from the facts one reconcile observed (SessionFacts,
// a typed record) to the whole outcome: the steps to carry out (push the session branch, write
// the session's Secrets, drop them once their sandbox stopped, deliver pending prompts, stop an
// idle session), the Sandbox it owns (a planned child: one per run of the session, removed once
// stopped), the SPEC §3.2 status with its conditions (Ready, BranchReady, SandboxReady;
// Progressing and ModelReachable with the checkpoint from what the daemon reports: reports.ts),
// the boot timeline (timeline.ts), the Events of a transition and when to look again. No I/O;
// `now` is injected.
// Later facts (a checkpoint, the engine's progress, credentials issued per wake) are new fields
// of SessionFacts and new rows of the decision, not a new shape.
import type { ClassifiedUnreachableKind } from '../../src/git/index.js';
import type { Outcome } from '../../src/runtime/index.js';
import { planChildren } from '../../src/runtime/index.js';
import {
  API_VERSION, CHECKPOINT_PUSHED_ANNOTATION, FINALIZER, LABEL_PROJECT, LABEL_SESSION, SANDBOX, STOP_REASON_ANNOTATION, controllerReference, getCondition, kubeTime, parseCheckpointPushed, pendingPrompts, sandboxName, setCondition,
  type Condition, type ConditionInput, type PendingPrompt, type Project, type Sandbox, type SandboxProvider, type Session, type SessionStatus, type SessionStatusValue,
} from '../../src/resources/index.js';
import { envList, sessionEnv, type DaemonHealth, type SandboxResync } from '../../src/sandbox/index.js';
import type { StartRetryPolicy } from '../../src/lib/start-retry.js';
import { UUID } from '../../src/lib/uuid.js';
import { sessionAgent } from '../../src/sessions/index.js';
import { branchRetryInMs, branchState, type BranchState } from './branch-retry.js';
import { daemonReports, withPushedCheckpoint } from './reports.js';
import { idleDeadlineMs, sessionRequeueAfterMs } from './resync.js';
import { nextTimeline, type StepTimes } from './timeline.js';

export interface SessionEvent { type: 'Normal' | 'Warning'; reason: string; message: string }

/** What one reconcile of a Session observed, and what its steps did. */
export interface SessionFacts {
  /** The session's Project (cache); null when it does not exist. */
  project: Project | null;
  /** Its Sandbox (cache), null when there is none. */
  sandbox: Sandbox | null;
  /**
   * Which of the session's Secrets exist: the Session Secret with both tokens, and the CLI
   * token's Secret. Read while a sandbox is about to start or its credentials may be spent
   * (readsSecrets); null when not read.
   */
  secrets: { session: boolean; cli: boolean } | null;
  /** The daemon's health, read while the sandbox is active and should run. */
  health: DaemonHealth | null;
  /** The project's idle timeout, else the operator's. */
  idleTimeoutMs: number;
  /** Step result: pushing the session branch, when this reconcile tried (null: not tried). */
  branch: BranchOutcome | null;
  /** Step result: prompts delivered to the root engine session by this reconcile (null: not tried). */
  delivered: number | null;
  /** When the steps of this reconcile ran (the boot timeline's branch and credentials). */
  stepTimes?: StepTimes;
}

/** Side effects the decision asks for (data only; steps.ts carries them out). */
export type SessionStep =
  /** Push refs/heads/<session id> at the tip of `baseRef` with the project's own credentials. */
  | { kind: 'push-branch'; baseRef: string }
  /** Create the Session Secret with new tokens (sandbox token, the session's CLI token). */
  | { kind: 'write-session-secret' }
  /** Create the CLI token's Secret (with the API tokens) from the Session Secret's CLI token. */
  | { kind: 'write-cli-token' }
  /** Revoke the CLI token and delete the Session Secret: their sandbox stopped (credentialsSpent). */
  | { kind: 'drop-credentials' }
  /** Send `prompts` (oldest first) to the root engine session at the daemon `address`, then remove the delivered ones. */
  | { kind: 'deliver-prompts'; address: string; rootSessionId: string; prompts: PendingPrompt[] }
  /** The idle sweep: spec.desiredState stopped, with the Idle stop reason. */
  | { kind: 'stop-idle' };

/** The outcome of pushing the session branch, when this reconcile tried. */
export type BranchOutcome =
  | { kind: 'ready'; baseSha: string; created: boolean }
  | {
    kind: 'failed'; reason: 'BaseRefNotFound' | 'RepositoryUnreachable' | ClassifiedUnreachableKind | 'CredentialsNotFound' | 'PushRejected'; message: string;
    /** Why waiting may help (transientCause of git's words: the host away, a cut connection); null or absent: it will not. */
    cause?: string | null;
  };

/** The facts the status is computed from (older name, kept for the status table tests). */
export type SessionObserved = Pick<SessionFacts, 'project' | 'branch' | 'sandbox' | 'health'> & { delivered: number | null };

export interface SessionOutcome {
  status: SessionStatus;
  events: SessionEvent[];
}

/** Where the sandbox clones from and the API it talks to (the operator's settings). */
export interface SandboxSettings {
  /** The API base the sandbox uses (SVC_API_URL). */
  apiUrl: string;
  /** SVC_REPO_URL for a project: the API's git gateway. */
  repoUrl(project: Project): string;
  provider: SandboxProvider;
  /** How often to look without being told (default DEFAULT_SANDBOX_RESYNC). */
  resync?: SandboxResync;
  /** How long a transient failure of the branch push is waited out (default DEFAULT_START_RETRY: SVC_START_DEADLINE_MS ...). */
  startRetry?: StartRetryPolicy;
}

const short = (sha: string) => sha.slice(0, 12);
/** The shortest wait for a branch push's next attempt. */
const MIN_BRANCH_LOOK_MS = 100;

/** The base ref a session branches from: its spec, else the project's default branch. */
export function baseRefOf(session: Session, project: Project): string {
  return session.spec.baseRef || project.spec.defaultBranch || 'main';
}

/** The non-secret §2.6 environment; the initial prompt only until the session first ran (a wake never resends it). */
export function sandboxEnv(session: Session, project: Project, settings: SandboxSettings): Record<string, string> {
  return sessionEnv({
    projectId: project.metadata.uid!,
    sessionId: session.metadata.name!,
    repoUrl: settings.repoUrl(project),
    defaultBranch: project.spec.defaultBranch || 'main',
    baseRef: baseRefOf(session, project),
    apiUrl: settings.apiUrl,
    agent: sessionAgent(session, project),
    model: session.spec.model,
    initialPrompt: session.status?.startedAt ? undefined : session.spec.initialPrompt,
    checkpoints: project.spec.checkpoints,
  });
}

/** The desired state of the Sandbox: the Session's, except that a failed session keeps none running. */
export function sandboxDesiredState(session: Session): 'running' | 'stopped' {
  return session.status?.status === 'failed' ? 'stopped' : session.spec.desiredState ?? 'running';
}

/** The Sandbox a session should have (owned by it, same name). */
export function desiredSandbox(session: Session, project: Project, settings: SandboxSettings): Sandbox {
  return {
    apiVersion: API_VERSION,
    kind: SANDBOX.kind,
    metadata: {
      name: sandboxName(session.metadata.name!),
      namespace: session.metadata.namespace,
      labels: { [LABEL_PROJECT]: project.metadata.name!, [LABEL_SESSION]: session.metadata.name! },
      ownerReferences: [controllerReference(session)],
      // the Sandbox controller's clean-up, there from the start: its first reconcile starts the
      // sandbox at once instead of writing the finalizer first (the runtime adds it when missing)
      finalizers: [FINALIZER],
    },
    spec: {
      sessionRef: { name: session.metadata.name! },
      provider: settings.provider,
      template: project.spec.sandbox ?? {},
      env: envList(sandboxEnv(session, project, settings)),
      desiredState: sandboxDesiredState(session),
    },
  };
}

/**
 * The merge patch that brings an existing Sandbox's spec to `desired`, or null. Only a stop: a
 * running sandbox keeps the environment it started with, and a stopped one is never started
 * again (a wake makes a new Sandbox, sandboxFor).
 */
export function sandboxSpecPatch(existing: Sandbox, desired: Sandbox): { spec: Partial<Sandbox['spec']> } | null {
  return existing.spec.desiredState === 'running' && desired.spec.desiredState === 'stopped' ? { spec: { desiredState: 'stopped' } } : null;
}

/**
 * A Sandbox that was asked to stop and whose sandbox is gone: the provider saw nothing of it
 * left (`stopped`), or it failed and was stopped (`error`).
 */
export function sandboxGone(sandbox: Sandbox): boolean {
  const state = sandbox.status?.state;
  return sandbox.spec.desiredState === 'stopped' && (state === 'stopped' || state === 'error' || state === undefined);
}

/** Whether the idle sweep stops the session now: running, engine not busy, no activity for `idleTimeoutMs`. */
export function isIdle(session: Session, health: DaemonHealth | null, idleTimeoutMs: number, now: Date): boolean {
  if (session.status?.status !== 'running' || session.spec.desiredState === 'stopped') return false;
  const deadline = idleDeadlineMs(health, idleTimeoutMs);
  return deadline !== null && now.getTime() >= deadline;
}

function condition(type: string, status: Condition['status'], reason: string, message: string, generation?: number): ConditionInput {
  return { type, status, reason, message, ...(generation !== undefined ? { observedGeneration: generation } : {}) };
}

function sandboxMessage(sandbox: Sandbox | null): string {
  return getCondition(sandbox?.status?.conditions, 'Ready')?.message ?? 'the sandbox is being created';
}

interface Verdict { status: SessionStatusValue; reason?: string; message: string }

/**
 * A Session's name is its id (the branch, the tokens, the sandbox's identity are made from it):
 * the API names it so; one applied with kubectl under another name fails at once, saying why.
 */
function nameProblem(session: Session): string | null {
  const name = session.metadata.name ?? '';
  return UUID.test(name) ? null : `a Session's name is its session id, a UUID (e.g. from uuidgen), and ${JSON.stringify(name)} is not one: delete it and apply it under a UUID name, or start it with svc sessions start`;
}

function verdict(session: Session, seen: SessionObserved, branch: BranchState): Verdict {
  const previous = session.status?.status;
  if (previous === 'failed') return { status: 'failed', reason: session.status?.reason, message: getCondition(session.status?.conditions, 'Ready')?.message ?? 'the session failed' };
  const invalidName = nameProblem(session);
  if (invalidName) return { status: 'failed', reason: 'InvalidName', message: invalidName };
  if (!seen.project) return { status: 'failed', reason: 'ProjectNotFound', message: `the project ${session.spec.projectRef.name} does not exist` };
  if (branch.kind === 'failed') return { status: 'failed', reason: branch.reason, message: branch.message };
  const sandboxState = seen.sandbox?.status?.state;
  if (session.spec.desiredState === 'stopped') {
    const gone = !seen.sandbox || sandboxGone(seen.sandbox);
    const reason = session.metadata.annotations?.[STOP_REASON_ANNOTATION] || 'Stopped';
    if (gone) return { status: 'stopped', reason, message: reason === 'Idle' ? 'stopped by the idle sweep; a prompt wakes it on the same branch' : 'stopped; a prompt wakes it on the same branch' };
    return { status: previous ?? 'provisioning', message: 'stopping the sandbox' };
  }
  // woken before the stopped sandbox was removed: a new one starts once it is gone
  if (seen.sandbox?.spec.desiredState === 'stopped') return { status: previous === 'running' ? 'running' : 'provisioning', message: 'the stopped sandbox is removed first; a new one starts next' };
  if (sandboxState === 'error') {
    return { status: 'failed', reason: seen.sandbox?.status?.reason ?? 'SandboxFailed', message: sandboxMessage(seen.sandbox) };
  }
  if (sandboxState === 'active' && seen.health?.engine.state === 'ready') return { status: 'running', message: 'the sandbox is active and its engine is ready' };
  // A sandbox restarted under a running session (its process died) keeps the session running.
  if (previous === 'running') return { status: 'running', message: `the sandbox is coming back: ${sandboxMessage(seen.sandbox)}` };
  if (branch.kind === 'waiting') {
    const why = branch.failure?.message ?? getCondition(session.status?.conditions, 'BranchReady')?.message ?? 'the push failed';
    return { status: 'provisioning', message: `waiting to push the session branch: ${why}` };
  }
  return { status: 'provisioning', message: seen.sandbox ? sandboxMessage(seen.sandbox) : 'creating the session branch and the sandbox' };
}

export function nextSessionStatus(session: Session, seen: SessionObserved, now: Date, startRetry?: StartRetryPolicy): SessionOutcome {
  const previous = session.status ?? {};
  const generation = session.metadata.generation;
  const branch = branchState(session, seen.branch, now, startRetry);
  const v = verdict(session, seen, branch);
  let conditions = previous.conditions ?? [];
  const set = (input: ConditionInput) => { conditions = setCondition(conditions, input, now); };
  const status: SessionStatus = { ...previous, status: v.status };
  // recorded once the project is seen: a Session applied with kubectl may name no agent
  if (seen.project) status.agent = sessionAgent(session, seen.project);
  if (seen.branch?.kind === 'ready') {
    status.branch = session.metadata.name!;
    status.baseSha = seen.branch.baseSha;
  }
  if (branch.kind === 'waiting' && v.status !== 'failed') status.branchRetry = branch.retry;
  else delete status.branchRetry;
  const branchFailure = branch.kind === 'failed' ? branch : branch.kind === 'waiting' ? branch.failure : null;
  if (status.baseSha) {
    set(condition('BranchReady', 'True', 'BranchPushed', `branch ${status.branch} at ${short(status.baseSha)} (from ${seen.project ? baseRefOf(session, seen.project) : session.spec.baseRef})`, generation));
  } else if (branchFailure) {
    set(condition('BranchReady', 'False', branchFailure.reason, branchFailure.message, generation));
  } else if (branch.kind === 'pending' && getCondition(previous.conditions, 'BranchReady')?.status !== 'False') {
    set(condition('BranchReady', 'Unknown', 'Pending', 'the session branch is not pushed yet', generation));
  }
  const sandboxState = seen.sandbox?.status?.state;
  if (sandboxState === 'active') set(condition('SandboxReady', 'True', 'Active', sandboxMessage(seen.sandbox), generation));
  else if (!seen.sandbox && v.status === 'stopped') set(condition('SandboxReady', 'False', 'Stopped', 'the sandbox was stopped and removed; a prompt starts a new one', generation));
  else set(condition('SandboxReady', 'False', seen.sandbox?.status?.reason ?? (sandboxState ? sandboxState[0]!.toUpperCase() + sandboxState.slice(1) : 'NotCreated'), sandboxMessage(seen.sandbox), generation));
  const readyReason = v.status === 'running' ? 'Running' : v.reason ?? (v.status === 'provisioning' ? 'Provisioning' : v.status[0]!.toUpperCase() + v.status.slice(1));
  set(condition('Ready', v.status === 'running' ? 'True' : 'False', readyReason, v.message, generation));
  // Progressing, ModelReachable, the checkpoint and the boot's Events: what the daemon reports
  const reported = seen.health ? daemonReports(previous, seen.health, generation) : null;
  for (const c of reported?.conditions ?? []) set(c);
  if (reported?.checkpoint) status.checkpoint = reported.checkpoint;
  const checkpoint = withPushedCheckpoint(status.checkpoint, parseCheckpointPushed(session.metadata.annotations?.[CHECKPOINT_PUSHED_ANNOTATION]));
  if (checkpoint) status.checkpoint = checkpoint;
  if (reported?.daemonReports) status.daemonReports = reported.daemonReports;
  status.conditions = conditions;
  if (generation !== undefined) status.observedGeneration = generation;
  if (seen.sandbox) {
    status.sandboxName = seen.sandbox.metadata.name;
    if (sandboxState) status.sandboxState = sandboxState;
    if (seen.sandbox.status?.lastActivityTime) status.lastActivityTime = seen.sandbox.status.lastActivityTime;
  }
  if (v.status === 'running' && seen.health?.engine.state === 'ready') {
    // first ran once its engine took the initial prompt: a wake before that gives it again
    if (!seen.health.engine.initial_prompt_pending) status.startedAt ??= kubeTime(now);
    if (seen.health.engine.root_session_id) status.rootSessionId = seen.health.engine.root_session_id;
  }
  if (v.status === 'stopped' || v.status === 'failed') status.reason = v.reason;
  else delete status.reason;
  if (status.reason === undefined) delete status.reason;
  return { status, events: [...sessionEvents(session, previous, status, seen, v), ...reported?.events ?? []] };
}

function sessionEvents(session: Session, before: SessionStatus, after: SessionStatus, seen: SessionObserved, v: Verdict): SessionEvent[] {
  const events: SessionEvent[] = [];
  if (seen.branch?.kind === 'ready') {
    events.push({ type: 'Normal', reason: 'BranchCreated', message: `pushed branch ${session.metadata.name} at ${short(seen.branch.baseSha)}${seen.branch.created ? '' : ' (it existed already)'}` });
  }
  if (seen.delivered) events.push({ type: 'Normal', reason: 'PromptDelivered', message: `delivered ${seen.delivered} prompt(s) to the root engine session` });
  if (before.status === after.status) return events;
  if (after.status === 'running') events.push({ type: 'Normal', reason: 'Running', message: v.message });
  if (after.status === 'failed') events.push({ type: 'Warning', reason: 'Failed', message: `${v.reason}: ${v.message}` });
  if (after.status === 'stopped') events.push({ type: 'Normal', reason: v.reason === 'Idle' ? 'Idle' : 'Stopped', message: v.message });
  if (after.status === 'provisioning' && before.status === 'stopped') events.push({ type: 'Normal', reason: 'Waking', message: 'a new sandbox on the same branch' });
  return events;
}

/**
 * The Sandbox to have, given the one there is (null: none, and none to create). One Sandbox per
 * run of the session: a new one only for a session that should run; a running one keeps its
 * spec except the desired state (sandboxSpecPatch); a stopped one whose sandbox is gone is
 * removed (retention, DESIGN §8.4: the Session stays the record), and a wake then makes a new
 * one, with new credentials. A failed session keeps its Sandbox (its state and reason).
 */
export function sandboxFor(session: Session, project: Project, settings: SandboxSettings, existing: Sandbox | null): Sandbox | null {
  const desired = desiredSandbox(session, project, settings);
  if (!existing) return desired.spec.desiredState === 'running' ? desired : null;
  if (existing.metadata.deletionTimestamp) return existing; // going: the next one takes its name once it is gone
  if (sandboxGone(existing) && session.status?.status !== 'failed') return null;
  const patch = sandboxSpecPatch(existing, desired);
  return patch ? { ...existing, spec: { ...existing.spec, ...patch.spec } } : existing;
}

/** Whether the daemon is ready for the pending prompts (the initial prompt, which the daemon sends, goes first). */
function promptsDeliverable(session: Session, health: DaemonHealth | null): health is DaemonHealth & { engine: { root_session_id: string } } {
  if (health?.engine.state !== 'ready' || !health.engine.root_session_id || health.engine.initial_prompt_pending) return false;
  return !(session.spec.initialPrompt && !session.status?.startedAt && !health.engine.initial_prompt_sent_at);
}

/** Does the session want a sandbox running (and so its tokens)? */
const wantsSandbox = (session: Session) => sandboxDesiredState(session) === 'running';

/**
 * The Secrets a sandbox about to start needs: the session wants one and has no Sandbox (a new
 * start, or a wake once the stopped one is gone). Not read again while it starts (each daemon
 * event is a reconcile): its Sandbox was made only once they existed.
 */
export function needsSecrets(session: Session, sandbox: Sandbox | null): boolean {
  return wantsSandbox(session) && !sandbox;
}

/**
 * The session's credentials (sandbox token, CLI token, and what derives from them: clone
 * credentials, the model-gateway key) belong to one run of its sandbox: once that sandbox has
 * stopped, or the session wants none and has none, they are spent and go (issue 20, DESIGN
 * §8.1); a wake issues new ones. Level-based: read from the Sandbox, not from a transition.
 */
export function credentialsSpent(session: Session, sandbox: Sandbox | null): boolean {
  return sandbox ? sandboxGone(sandbox) : !wantsSandbox(session);
}

/** Which Secrets observe reads: those a sandbox about to start needs, or spent ones to drop. */
export function readsSecrets(session: Session, sandbox: Sandbox | null): boolean {
  return needsSecrets(session, sandbox) || credentialsSpent(session, sandbox);
}

/**
 * The Session controller's decision. Steps come first, one concern at a time (the runtime
 * performs them and decides again with what they did): dropping spent credentials or writing
 * those a new sandbox needs, the branch once the Sandbox exists (pushed while the sandbox
 * starts), then the idle sweep or the pending prompts. With no step left: the Sandbox child, the
 * status, the Events and the next look.
 */
export function decideSession(session: Session, facts: SessionFacts, settings: SandboxSettings, now: Date): Outcome<SessionStatus, SessionStep> {
  const { project, sandbox, health } = facts;
  const waiting = (steps: SessionStep[]) => ({ status: session.status ?? {}, steps });
  // nothing is made for a session that has failed, or will at once (its name is not an id)
  const failed = session.status?.status === 'failed' || nameProblem(session) !== null;
  if (facts.secrets && (facts.secrets.session || facts.secrets.cli) && credentialsSpent(session, sandbox)) return waiting([{ kind: 'drop-credentials' }]);
  if (project && !failed && needsSecrets(session, sandbox) && facts.secrets) {
    if (!facts.secrets.session) return waiting([{ kind: 'write-session-secret' }]);
    if (!facts.secrets.cli) return waiting([{ kind: 'write-cli-token' }]);
  }
  // The branch is pushed while the sandbox starts (its slot, process and daemon take longer than
  // a push), not before it: the Sandbox first, the push in the reconcile its creation wakes. A
  // daemon that clones before the push lands branches from the same base ref itself.
  // A push that met a transient failure is tried again at its time (branch-retry.ts), not at every look.
  const branchPending = !!project && !failed && !session.status?.baseSha && facts.branch === null;
  const branchWaitMs = branchPending ? branchRetryInMs(session, now) : 0;
  if (branchPending && branchWaitMs === 0 && (sandbox || !wantsSandbox(session))) return waiting([{ kind: 'push-branch', baseRef: baseRefOf(session, project) }]);
  const address = sandbox?.status?.address;
  const serving = sandbox?.status?.state === 'active' && !!address && sandbox.spec.desiredState === 'running';
  if (serving && isIdle(session, health, facts.idleTimeoutMs, now)) return waiting([{ kind: 'stop-idle' }]);
  const prompts = pendingPrompts(session);
  if (serving && prompts.length && facts.delivered === null && promptsDeliverable(session, health)) {
    return waiting([{ kind: 'deliver-prompts', address: address!, rootSessionId: health.engine.root_session_id, prompts }]);
  }

  const outcome = nextSessionStatus(session, facts, now, settings.startRetry);
  // a new Sandbox once its Secrets are written; it follows this decision (a session failing now stops it now)
  const wanted = project && (sandbox || (facts.secrets?.session && facts.secrets.cli)) ? sandboxFor({ ...session, status: outcome.status }, project, settings, sandbox) : null;
  const children = project && (sandbox || wanted)
    ? [{ type: SANDBOX, plan: planChildren(sandbox ? [sandbox] : [], wanted ? [wanted] : []) }]
    : [];
  const timeline = nextTimeline(session.status?.timeline, {
    restart: session.status?.status === 'stopped' && outcome.status.status === 'provisioning',
    stepTimes: facts.stepTimes ?? {},
    branchWaiting: !!outcome.status.branchRetry,
    sandboxRequested: wanted?.spec.desiredState === 'running' && sandbox?.spec.desiredState !== 'running',
    health,
    delivered: facts.delivered,
  }, now);
  const status = { ...outcome.status };
  if (timeline) status.timeline = timeline;
  else delete status.timeline;
  let requeueAfter = sessionRequeueAfterMs(status.status, { health, idleTimeoutMs: facts.idleTimeoutMs, now, resync: settings.resync });
  const retryInMs = branchRetryInMs({ ...session, status }, now);
  // at the next attempt's time (not before: a look that comes early would not push)
  if (status.branchRetry) requeueAfter = Math.min(requeueAfter ?? Infinity, Math.max(MIN_BRANCH_LOOK_MS, retryInMs));
  return { status, events: outcome.events, children, requeueAfter };
}
