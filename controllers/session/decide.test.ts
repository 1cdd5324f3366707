import { describe, expect, it } from 'vitest';
import { getCondition, type Project, type Sandbox, type SandboxState, type Session, type SessionStatus } from '../../src/resources/index.js';
import { envMap, type DaemonHealth } from '../../src/sandbox/index.js';
import { credentialsSpent, decideSession, desiredSandbox, isIdle, nextSessionStatus, sandboxSpecPatch, type SandboxSettings, type SessionFacts, type SessionObserved } from './decide.js';

const NOW = new Date('2026-11-23T12:00:00Z');
const ID = '0b6c3f52-8d1e-4c55-9b1a-2f0e6f1c9a10';
const SHA = 'a'.repeat(40);
const project: Project = {
  apiVersion: 'svc.dev/v1alpha1', kind: 'Project',
  metadata: { name: 'demo', namespace: 'default', uid: 'p-uid' },
  spec: { repoUrl: '/srv/repo', defaultBranch: 'main' },
};
const settings: SandboxSettings = { apiUrl: 'http://127.0.0.1:8080/v1', repoUrl: (p) => `http://127.0.0.1:8080/v1/projects/${p.metadata.uid}/git`, provider: 'process' };

function session(status?: SessionStatus, spec: Partial<Session['spec']> = {}, annotations?: Record<string, string>): Session {
  return {
    apiVersion: 'svc.dev/v1alpha1', kind: 'Session',
    metadata: { name: ID, namespace: 'default', uid: 's-uid', generation: 2, ...(annotations ? { annotations } : {}) },
    spec: { projectRef: { name: 'demo' }, agent: 'default', baseRef: 'main', desiredState: 'running', initialPrompt: 'do it', ...spec },
    status,
  };
}

function sandbox(state?: SandboxState, desiredState: 'running' | 'stopped' = 'running', reason?: string): Sandbox {
  return {
    apiVersion: 'svc.dev/v1alpha1', kind: 'Sandbox', metadata: { name: ID, namespace: 'default', uid: 'sb' },
    spec: { sessionRef: { name: ID }, provider: 'process', template: {}, env: [], desiredState },
    status: state ? { state, ...(reason ? { reason } : {}), conditions: [{ type: 'Ready', status: 'False', reason: reason ?? 'x', message: 'the engine could not start: boom', lastTransitionTime: '2026-11-23T11:00:00Z' }] } : undefined,
  };
}

function health(over: Partial<DaemonHealth['engine']> = {}, lastActivity = '2026-11-23T11:59:00Z'): DaemonHealth {
  return {
    status: 'ok',
    daemon: { state: 'ready', error: null, started_at: '2026-11-23T11:00:00Z' },
    engine: { state: 'ready', restarts: 0, last_error: null, root_session_id: 'ses_1', initial_prompt_sent_at: '2026-11-23T11:00:05Z', run: { type: 'idle' }, ...over },
    last_activity_at: lastActivity,
  };
}

const seen = (over: Partial<SessionObserved>): SessionObserved => ({ project, branch: null, sandbox: null, health: null, delivered: 0, ...over });
const branched: SessionStatus = { status: 'provisioning', branch: ID, baseSha: SHA };

describe('Session status (SPEC §3.2)', () => {
  it.each([
    ['new: branch pushed, sandbox requested', session(), seen({ branch: { kind: 'ready', baseSha: SHA, created: true }, sandbox: sandbox() }), 'provisioning', undefined, ['BranchCreated']],
    ['base ref missing', session(), seen({ branch: { kind: 'failed', reason: 'BaseRefNotFound', message: 'no ref' } }), 'failed', 'BaseRefNotFound', ['Failed']],
    ['repository unreachable', session(), seen({ branch: { kind: 'failed', reason: 'RepositoryUnreachable', message: 'down' } }), 'failed', 'RepositoryUnreachable', ['Failed']],
    ['the host key refused: the classified reason', session(), seen({ branch: { kind: 'failed', reason: 'HostKeyVerificationFailed', message: 'Host key verification failed' } }), 'failed', 'HostKeyVerificationFailed', ['Failed']],
    ['project gone', session(), seen({ project: null }), 'failed', 'ProjectNotFound', ['Failed']],
    ['a name that is not a UUID (applied with kubectl)', { ...session(), metadata: { ...session().metadata, name: 'my-session' } }, seen({}), 'failed', 'InvalidName', ['Failed']],
    ['sandbox active, engine ready', session(branched), seen({ sandbox: sandbox('active'), health: health() }), 'running', undefined, ['Running']],
    ['engine failed', session(branched), seen({ sandbox: sandbox('error', 'running', 'EngineFailed') }), 'failed', 'EngineFailed', ['Failed']],
    ['stop requested, sandbox still there', session({ ...branched, status: 'running' }, { desiredState: 'stopped' }), seen({ sandbox: sandbox('active', 'stopped') }), 'running', undefined, []],
    ['stopped', session({ ...branched, status: 'running' }, { desiredState: 'stopped' }), seen({ sandbox: sandbox('stopped', 'stopped') }), 'stopped', 'Stopped', ['Stopped']],
    ['idle sweep', session({ ...branched, status: 'running' }, { desiredState: 'stopped' }, { 'svc.dev/stop-reason': 'Idle' }), seen({ sandbox: sandbox('stopped', 'stopped') }), 'stopped', 'Idle', ['Idle']],
    ['wake', session({ ...branched, status: 'stopped', reason: 'Idle', startedAt: '2026-11-23T10:00:00Z' }), seen({ sandbox: sandbox('provisioning') }), 'provisioning', undefined, ['Waking']],
    ['wake before the stopped Sandbox was removed', session({ ...branched, status: 'stopped', startedAt: '2026-11-23T10:00:00Z' }), seen({ sandbox: sandbox('stopped', 'stopped') }), 'provisioning', undefined, ['Waking']],
    ['a stopped session whose Sandbox was removed stays stopped', session({ ...branched, status: 'stopped', reason: 'Stopped', sandboxState: 'stopped' }, { desiredState: 'stopped' }), seen({}), 'stopped', 'Stopped', []],
    ['running, sandbox restarting after a crash', session({ ...branched, status: 'running' }), seen({ sandbox: sandbox('provisioning') }), 'running', undefined, []],
    ['failed stays failed', session({ ...branched, status: 'failed', reason: 'EngineFailed' }), seen({ sandbox: sandbox('active'), health: health() }), 'failed', 'EngineFailed', []],
  ] as const)('%s', (_name, s, observed, status, reason, events) => {
    const out = nextSessionStatus(s, observed, NOW);
    expect(out.status.status).toBe(status);
    expect(out.status.reason).toBe(reason);
    expect(out.status.observedGeneration).toBe(2);
    for (const type of ['Ready', 'BranchReady', 'SandboxReady']) expect(getCondition(out.status.conditions, type)?.observedGeneration).toBe(2);
    expect(getCondition(out.status.conditions, 'Ready')?.status).toBe(status === 'running' ? 'True' : 'False');
    expect(out.events.map((e) => e.reason)).toEqual(events);
    if (reason === 'InvalidName') expect(getCondition(out.status.conditions, 'Ready')?.message).toBe('a Session\'s name is its session id, a UUID (e.g. from uuidgen), and "my-session" is not one: delete it and apply it under a UUID name, or start it with svc sessions start');
  });

  it('a stopped session whose Sandbox was removed keeps its last sandbox state and says so', () => {
    const out = nextSessionStatus(session({ ...branched, status: 'stopped', reason: 'Stopped', sandboxName: ID, sandboxState: 'stopped' }, { desiredState: 'stopped' }), seen({}), NOW);
    expect(out.status).toMatchObject({ sandboxName: ID, sandboxState: 'stopped' });
    expect(getCondition(out.status.conditions, 'SandboxReady')).toMatchObject({ status: 'False', reason: 'Stopped' });
  });

  it('records branch, base sha, first start, root session and activity', () => {
    const out = nextSessionStatus(session(branched), seen({ sandbox: { ...sandbox('active'), status: { state: 'active', lastActivityTime: '2026-11-23T11:59:00Z' } }, health: health() }), NOW);
    expect(out.status).toMatchObject({ branch: ID, baseSha: SHA, sandboxName: ID, sandboxState: 'active', startedAt: '2026-11-23T12:00:00Z', rootSessionId: 'ses_1', lastActivityTime: '2026-11-23T11:59:00Z' });
    expect(getCondition(out.status.conditions, 'BranchReady')?.status).toBe('True');
    expect(getCondition(out.status.conditions, 'SandboxReady')?.status).toBe('True');
  });

  it('has not first run while its engine has not taken the initial prompt: stopped then, its wake gives it again', () => {
    const waiting = nextSessionStatus(session(branched), seen({ sandbox: sandbox('active'), health: health({ initial_prompt_sent_at: null, initial_prompt_pending: true }) }), NOW);
    expect(waiting.status).toMatchObject({ status: 'running', rootSessionId: 'ses_1' });
    expect(waiting.status.startedAt).toBeUndefined();
    const woken = desiredSandbox(session({ ...branched, ...waiting.status, status: 'stopped' }), project, settings);
    expect(envMap(woken.spec.env).SVC_INITIAL_PROMPT).toBe('do it');
  });
});

describe('the agent of a session', () => {
  const withDefault: Project = { ...project, status: { manifest: { valid: true, issues: [], defaultAgent: 'coder' } } };
  it.each<[string, Partial<Session['spec']>, SessionStatus | undefined, Project, string]>([
    ['named in the spec', { agent: 'reviewer' }, undefined, withDefault, 'reviewer'],
    ["none named (applied with kubectl): the manifest's default_agent", { agent: undefined }, undefined, withDefault, 'coder'],
    ['none named, already recorded: kept when the manifest changes its default', { agent: undefined }, { status: 'stopped', agent: 'triage' }, withDefault, 'triage'],
    ['none named, and no default_agent in the manifest', { agent: undefined }, undefined, project, 'default'],
  ])('%s', (_name, spec, status, seenProject, agent) => {
    const s = session(status, spec);
    expect(nextSessionStatus(s, seen({ project: seenProject }), NOW).status.agent).toBe(agent);
    expect(envMap(desiredSandbox(s, seenProject, settings).spec.env).SVC_AGENT_NAME).toBe(agent);
  });
});

describe('the Sandbox of a session', () => {
  it('is owned by the session, carries the non-secret environment and the initial prompt only before the first start', () => {
    const first = desiredSandbox(session(branched), project, settings);
    expect(first.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'Session', name: ID, controller: true });
    expect(first.metadata.finalizers).toEqual(['svc.dev/cleanup']); // made with the Sandbox controller's clean-up
    const env = envMap(first.spec.env);
    expect(env.SVC_INITIAL_PROMPT).toBe('do it');
    expect(env.SVC_REPO_URL).toBe('http://127.0.0.1:8080/v1/projects/p-uid/git');
    expect(Object.keys(env).filter((k) => /TOKEN/.test(k))).toEqual([]);
    const woken = desiredSandbox(session({ ...branched, status: 'stopped', startedAt: '2026-11-23T10:00:00Z' }), project, settings);
    expect(envMap(woken.spec.env)).not.toHaveProperty('SVC_INITIAL_PROMPT');
  });

  it('a failed session keeps no sandbox running', () => {
    expect(desiredSandbox(session({ ...branched, status: 'failed' }), project, settings).spec.desiredState).toBe('stopped');
  });

  it('patches only a stop: a running sandbox keeps its environment, a stopped one is never started again', () => {
    const want = desiredSandbox(session({ ...branched, status: 'stopped', startedAt: 'x' }), project, settings);
    const stopped = { ...sandbox('stopped', 'stopped'), spec: { ...want.spec, env: [...want.spec.env, { name: 'SVC_INITIAL_PROMPT', value: 'do it' }], desiredState: 'stopped' as const } };
    expect(sandboxSpecPatch(stopped, want)).toBeNull();
    expect(sandboxSpecPatch({ ...stopped, spec: { ...stopped.spec, desiredState: 'running' } }, want)).toBeNull();
    const stop = desiredSandbox(session(branched, { desiredState: 'stopped' }), project, settings);
    expect(sandboxSpecPatch({ ...stopped, spec: { ...stopped.spec, desiredState: 'running' } }, stop)).toEqual({ spec: { desiredState: 'stopped' } });
  });

  it.each<[string, Session, Sandbox | null, boolean]>([
    ['running session, running sandbox', session(branched), sandbox('active'), false],
    ['new session, no sandbox yet', session(branched), null, false],
    ['stop asked, the sandbox still checkpointing', session(branched, { desiredState: 'stopped' }), sandbox('active', 'stopped'), false],
    ['stopped, the sandbox gone', session(branched, { desiredState: 'stopped' }), sandbox('stopped', 'stopped'), true],
    ['stopped, its Sandbox removed', session(branched, { desiredState: 'stopped' }), null, true],
    ['failed, the sandbox stopped', session({ ...branched, status: 'failed' }), sandbox('error', 'stopped'), true],
    ['failed, the sandbox not stopped yet', session({ ...branched, status: 'failed' }), sandbox('error', 'running'), false],
    ['woken before the stopped Sandbox was removed', session({ ...branched, status: 'stopped' }), sandbox('stopped', 'stopped'), true],
    ['a sandbox that crashed under a running session', session({ ...branched, status: 'running' }), sandbox('provisioning'), false],
  ])('credentials spent: %s -> %s', (_name, s, box, spent) => {
    expect(credentialsSpent(s, box)).toBe(spent);
  });
});

describe('idle sweep', () => {
  const runningSession = session({ ...branched, status: 'running' });
  const MIN = 60_000;
  it.each([
    ['quiet for longer than the timeout', health({}, '2026-11-23T11:40:00Z'), 10 * MIN, true],
    ['recent activity', health({}, '2026-11-23T11:55:00Z'), 10 * MIN, false],
    ['busy engine is never idle', health({ run: { type: 'busy' } }, '2026-11-23T10:00:00Z'), 10 * MIN, false],
    ['retrying engine is never idle', health({ run: { type: 'retry', attempt: 3 } }, '2026-11-23T10:00:00Z'), 10 * MIN, false],
    ['no activity yet: counts from the daemon start', health({}, null as unknown as string), 30 * MIN, true],
    ['no health: not idle', null, MIN, false],
  ] as const)('%s', (_name, h, timeout, idle) => {
    expect(isIdle(runningSession, h, timeout, NOW)).toBe(idle);
  });

  it('only a running session can be idle', () => {
    expect(isIdle(session({ ...branched, status: 'provisioning' }), health({}, '2026-11-23T10:00:00Z'), 1000, NOW)).toBe(false);
  });
});

describe('decideSession: steps first, then the Sandbox and the status', () => {
  const facts = (over: Partial<SessionFacts> = {}): SessionFacts => ({
    project, sandbox: null, secrets: { session: true, cli: true }, health: null, idleTimeoutMs: 30 * 60_000, branch: null, delivered: null, ...over,
  });
  const prompt = { id: 'p1', text: 'and a test', source: 'api' as const, at: '2026-11-23T11:00:00Z' };
  const withPrompt = { 'svc.dev/pending-prompts': JSON.stringify([prompt]) };
  const serving = (desired: 'running' | 'stopped' = 'running'): Sandbox => ({ ...sandbox('active', desired), status: { state: 'active', address: '127.0.0.1:4000' } });
  const running = session({ ...branched, status: 'running', startedAt: '2026-11-23T11:00:00Z' });

  /** The steps asked, or `children:<create|update|none>` when none is left. */
  function next(s: Session, f: SessionFacts): string {
    const out = decideSession(s, f, settings, NOW);
    if (out.steps?.length) return out.steps.map((step) => step.kind).join(',');
    const plan = out.children?.[0]?.plan;
    return `children:${!plan ? 'none' : plan.create.length ? 'create' : plan.update.length ? `update-${(plan.update[0] as Sandbox).spec.desiredState}` : plan.delete.length ? 'delete' : 'none'}`;
  }

  it.each<[string, Session, SessionFacts, string]>([
    ['new: the Session Secret first', session(), facts({ secrets: { session: false, cli: false } }), 'write-session-secret'],
    ['new: then the CLI token', session(), facts({ secrets: { session: true, cli: false } }), 'write-cli-token'],
    ['both Secrets: the sandbox, before the branch', session(), facts(), 'children:create'],
    ['the Sandbox exists: the branch is pushed while it starts', session(), facts({ sandbox: sandbox('provisioning') }), 'push-branch'],
    ['pushed: the sandbox stays as it is', session(), facts({ sandbox: sandbox('provisioning'), branch: { kind: 'ready', baseSha: SHA, created: true } }), 'children:none'],
    ['the push failed: the sandbox stops at once', session(), facts({ sandbox: sandbox('provisioning'), branch: { kind: 'failed', reason: 'BaseRefNotFound', message: 'no ref' } }), 'children:update-stopped'],
    ['a session that wants no sandbox still gets its branch', session(undefined, { desiredState: 'stopped' }), facts({ secrets: null }), 'push-branch'],
    ['no project: nothing to push, no sandbox', session(), facts({ project: null }), 'children:none'],
    ['a name that is not a session id (kubectl apply): no Secret, no branch, no sandbox', { ...session(), metadata: { ...session().metadata, name: 'my-session' } }, facts({ secrets: { session: false, cli: false } }), 'children:none'],
    ['branch recorded, no Session Secret yet (a wake): write it before the sandbox', session(branched), facts({ secrets: { session: false, cli: false } }), 'write-session-secret'],
    ['then the CLI token', session(branched), facts({ secrets: { session: true, cli: false } }), 'write-cli-token'],
    ['both Secrets: the sandbox', session(branched), facts(), 'children:create'],
    ['a failed session keeps no sandbox running', session({ ...branched, status: 'failed', reason: 'EngineFailed' }), facts({ sandbox: serving(), secrets: null }), 'children:update-stopped'],
    ['stop: the sandbox stops', session({ ...branched, status: 'running' }, { desiredState: 'stopped' }), facts({ sandbox: serving(), secrets: null }), 'children:update-stopped'],
    ['stopping: the credentials stay while the sandbox saves its checkpoint', session({ ...branched, status: 'running' }, { desiredState: 'stopped' }), facts({ sandbox: sandbox('active', 'stopped') }), 'children:none'],
    ['stopped, the sandbox gone: its credentials go', session({ ...branched, status: 'running' }, { desiredState: 'stopped' }), facts({ sandbox: sandbox('stopped', 'stopped') }), 'drop-credentials'],
    ['…then the Sandbox (retention)', session({ ...branched, status: 'running' }, { desiredState: 'stopped' }), facts({ sandbox: sandbox('stopped', 'stopped'), secrets: { session: false, cli: false } }), 'children:delete'],
    ['stopped and removed: nothing more', session({ ...branched, status: 'stopped' }, { desiredState: 'stopped' }), facts({ secrets: { session: false, cli: false } }), 'children:none'],
    ['failed, the sandbox stopped: its credentials go, the Sandbox stays', session({ ...branched, status: 'failed', reason: 'EngineFailed' }), facts({ sandbox: sandbox('error', 'stopped') }), 'drop-credentials'],
    ['…and stays', session({ ...branched, status: 'failed', reason: 'EngineFailed' }), facts({ sandbox: sandbox('error', 'stopped'), secrets: { session: false, cli: false } }), 'children:none'],
    ['wake after the Sandbox was removed: new credentials first', session({ ...branched, status: 'stopped', startedAt: 'x' }), facts({ secrets: { session: false, cli: false } }), 'write-session-secret'],
    ['…then a new Sandbox', session({ ...branched, status: 'stopped', startedAt: 'x' }), facts(), 'children:create'],
    ['wake before the stopped Sandbox was removed: its credentials go', session({ ...branched, status: 'stopped', startedAt: 'x' }), facts({ sandbox: sandbox('stopped', 'stopped') }), 'drop-credentials'],
    ['…then it is removed, no new credentials yet', session({ ...branched, status: 'stopped', startedAt: 'x' }), facts({ sandbox: sandbox('stopped', 'stopped'), secrets: { session: false, cli: false } }), 'children:delete'],
    ['…and while it goes, nothing', session({ ...branched, status: 'stopped', startedAt: 'x' }), facts({ sandbox: { ...sandbox('stopped', 'stopped'), metadata: { name: ID, namespace: 'default', uid: 'sb', deletionTimestamp: 'x' } }, secrets: { session: false, cli: false } }), 'children:none'],
    ['serving and quiet past the timeout: the idle sweep stops it', running, facts({ sandbox: serving(), secrets: null, health: health({}, '2026-11-23T11:00:00Z'), idleTimeoutMs: 10 * 60_000 }), 'stop-idle'],
    ['serving with a pending prompt: deliver it', session({ ...branched, status: 'running', startedAt: 'x' }, {}, withPrompt), facts({ sandbox: serving(), secrets: null, health: health() }), 'deliver-prompts'],
    ['delivery tried this reconcile: not again', session({ ...branched, status: 'running', startedAt: 'x' }, {}, withPrompt), facts({ sandbox: serving(), secrets: null, health: health(), delivered: 0 }), 'children:none'],
    ['the initial prompt goes first', session({ ...branched, status: 'provisioning' }, {}, withPrompt), facts({ sandbox: serving(), secrets: null, health: health({ initial_prompt_sent_at: null }) }), 'children:none'],
    ['the initial prompt goes first, also after the session ran (an engine that died taking it)', session({ ...branched, status: 'running', startedAt: 'x' }, {}, withPrompt), facts({ sandbox: serving(), secrets: null, health: health({ initial_prompt_sent_at: null, initial_prompt_pending: true }) }), 'children:none'],
    ['an engine not ready takes no prompt', session({ ...branched, status: 'running', startedAt: 'x' }, {}, withPrompt), facts({ sandbox: serving(), secrets: null, health: health({ state: 'restarting' }) }), 'children:none'],
  ])('%s', (_name, s, f, expected) => {
    expect(next(s, f)).toBe(expected);
  });

  it('the prompts step names the daemon, the root engine session and the prompts, oldest first', () => {
    const out = decideSession(session({ ...branched, status: 'running', startedAt: 'x' }, {}, withPrompt), facts({ sandbox: serving(), secrets: null, health: health() }), settings, NOW);
    expect(out.steps).toEqual([{ kind: 'deliver-prompts', address: '127.0.0.1:4000', rootSessionId: 'ses_1', prompts: [prompt] }]);
  });

  it('with no step left: the status, its Events and the next look', () => {
    const out = decideSession(session(), facts({ branch: { kind: 'ready', baseSha: SHA, created: true } }), settings, NOW);
    expect(out.status).toMatchObject({ status: 'provisioning', branch: ID, baseSha: SHA });
    expect(out.events?.map((e) => e.reason)).toEqual(['BranchCreated']);
    expect(out.requeueAfter).toBe(5000); // the safety net: the Sandbox's changes wake it before
    const delivered = decideSession(running, facts({ sandbox: serving(), secrets: null, health: health(), delivered: 2 }), { ...settings, resync: { provisioningMs: 1, runningMs: 7000 } }, NOW);
    expect(delivered.events?.map((e) => e.reason)).toEqual(['PromptDelivered']);
    expect(delivered.requeueAfter).toBe(7000);
  });
});

describe('decideSession: what the daemon reports, and the boot timeline', () => {
  const facts = (over: Partial<SessionFacts> = {}): SessionFacts => ({
    project, sandbox: null, secrets: { session: true, cli: true }, health: null, idleTimeoutMs: 30 * 60_000, branch: null, delivered: null, ...over,
  });
  const serving: Sandbox = { ...sandbox('active'), status: { state: 'active', address: '127.0.0.1:4000' } };
  const checkpoint = { sha: 'c'.repeat(40), at: '2026-11-23T11:30:00Z' };

  it('a new start: the timed steps and the sandbox asked for', () => {
    const out = decideSession(session(), facts({
      branch: { kind: 'ready', baseSha: SHA, created: true },
      stepTimes: { 'push-branch': { startedAt: '2026-11-23T11:59:59.000Z', endedAt: '2026-11-23T11:59:59.400Z' }, 'write-session-secret': { startedAt: '2026-11-23T11:59:59.400Z', endedAt: '2026-11-23T11:59:59.500Z' } },
    }), settings, NOW);
    expect(out.status.timeline).toEqual([
      { phase: 'branch', startedAt: '2026-11-23T11:59:59.000Z', endedAt: '2026-11-23T11:59:59.400Z' },
      { phase: 'credentials', startedAt: '2026-11-23T11:59:59.400Z', endedAt: '2026-11-23T11:59:59.500Z' },
      { phase: 'sandbox', startedAt: NOW.toISOString() },
    ]);
  });

  it('a wake: the stop reason goes, the last start\'s timeline starts over, the checkpoint stays', () => {
    const stopped = session({ ...branched, status: 'stopped', reason: 'Stopped', startedAt: '2026-11-23T10:00:00Z', checkpoint, timeline: [{ phase: 'branch', startedAt: '2026-11-23T10:00:00.000Z', endedAt: '2026-11-23T10:00:00.100Z' }] });
    // the stopped run's Sandbox and credentials are gone (a wake starts a new run)
    const out = decideSession(stopped, facts({ sandbox: null }), settings, NOW);
    expect(out.status).not.toHaveProperty('reason');
    expect(out.status).toMatchObject({ status: 'provisioning', checkpoint, timeline: [{ phase: 'sandbox', startedAt: NOW.toISOString() }] });
    expect(out.events?.map((e) => e.reason)).toEqual(['Waking']);
  });

  it('a stalled engine: Progressing=False with the daemon\'s reason, a Warning per new stall, the checkpoint recorded', () => {
    const running = session({ ...branched, status: 'running', startedAt: 'x' });
    const stalled = { ...health(), checkpoint: { enabled: true, ref: 'r', sha: checkpoint.sha, at: checkpoint.at, restored: null, skipped: null, conversation: { restored: null, error: null }, writes: 1, last_error: null }, progress: { state: 'stalled' as const, reason: 'the turn showed no engine event for 600 s', since: 'x', busy: true, last_event_at: null, stalls: 1, last_stall: { at: 'x', reason: 'the turn showed no engine event for 600 s' } } };
    const out = decideSession(running, facts({ sandbox: serving, secrets: null, health: stalled }), settings, NOW);
    expect(getCondition(out.status.conditions, 'Progressing')).toMatchObject({ status: 'False', reason: 'EngineStalled', message: expect.stringContaining('no engine event for 600 s') });
    expect(out.status.checkpoint).toEqual(checkpoint);
    expect(out.events?.map((e) => `${e.type} ${e.reason}`)).toEqual(['Warning EngineStalled']);
    const again = decideSession({ ...running, status: out.status }, facts({ sandbox: serving, secrets: null, health: stalled }), settings, NOW);
    expect(again.events).toEqual([]);
  });
});
