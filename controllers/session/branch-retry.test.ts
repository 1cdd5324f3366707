// The session branch push waits out a transient failure until the start deadline (issue 24 §5).
import { describe, expect, it } from 'vitest';
import { getCondition, type Sandbox, type Session, type SessionStatus } from '../../src/resources/index.js';
import { decideSession, type BranchOutcome, type SandboxSettings, type SessionFacts } from './decide.js';

const ID = '0b6c3f52-8d1e-4c55-9b1a-2f0e6f1c9a10';
const CREATED = Date.parse('2026-11-23T12:00:00Z');
const at = (ms: number) => new Date(CREATED + ms);
const policy = { deadlineMs: 60_000, backoffMs: 500, maxBackoffMs: 5_000 };
const settings: SandboxSettings = { apiUrl: 'http://127.0.0.1:8080/v1', repoUrl: () => 'http://127.0.0.1:8080/git', provider: 'process', startRetry: policy };
const project = { apiVersion: 'svc.dev/v1alpha1', kind: 'Project', metadata: { name: 'demo', namespace: 'default', uid: 'p-uid' }, spec: { repoUrl: 'http://git.example/r.git', defaultBranch: 'main' } } as const;
const sandbox: Sandbox = {
  apiVersion: 'svc.dev/v1alpha1', kind: 'Sandbox', metadata: { name: ID, namespace: 'default', uid: 'sb' },
  spec: { sessionRef: { name: ID }, provider: 'process', template: {}, env: [], desiredState: 'running' },
  status: { state: 'provisioning' },
};
const away: BranchOutcome = {
  kind: 'failed', reason: 'HostUnreachable', cause: 'the API or the git host is unreachable',
  message: 'could not create the session branch in http://git.example/r.git: repository http://git.example/r.git is unreachable: Failed to connect to git.example port 80: Connection refused',
};

function session(status?: SessionStatus): Session {
  return {
    apiVersion: 'svc.dev/v1alpha1', kind: 'Session',
    metadata: { name: ID, namespace: 'default', uid: 's-uid', generation: 1, creationTimestamp: new Date(CREATED).toISOString() },
    spec: { projectRef: { name: 'demo' }, agent: 'default', baseRef: 'main', desiredState: 'running' },
    status,
  };
}
const facts = (over: Partial<SessionFacts> = {}): SessionFacts => ({ project, sandbox, secrets: null, health: null, idleTimeoutMs: 1_800_000, branch: null, delivered: null, ...over });
const decide = (s: Session, f: SessionFacts, now: Date) => decideSession(s, f, settings, now);

/** Runs the push's attempts at the times the decision asks for, each failing with `outcome`, until it fails or `count` attempts. */
function failRepeatedly(count: number, outcome: BranchOutcome = away): { status: SessionStatus; now: Date; attempts: number } {
  let status: SessionStatus = { status: 'provisioning' };
  let now = at(1_000);
  for (let attempt = 1; attempt <= count; attempt++) {
    const out = decide(session(status), facts({ branch: outcome }), now);
    status = out.status;
    if (status.status === 'failed') return { status, now, attempts: attempt };
    now = new Date(Date.parse(status.branchRetry!.nextAttemptAt));
  }
  return { status, now, attempts: count };
}

describe('the session branch push meets a git host that is away', () => {
  it('the first failure: still provisioning, BranchReady says why and when the next attempt is, the look comes then', () => {
    const out = decide(session({ status: 'provisioning' }), facts({ branch: away }), at(1_000));
    expect(out.status.status).toBe('provisioning');
    expect(out.status.reason).toBeUndefined();
    expect(out.status.branchRetry).toEqual({ attempts: 1, nextAttemptAt: at(1_500).toISOString() });
    const branch = getCondition(out.status.conditions, 'BranchReady');
    expect(branch).toMatchObject({ status: 'False', reason: 'HostUnreachable' });
    expect(branch?.message).toContain('Connection refused; the API or the git host is unreachable: trying again in 0.5 s (attempt 1, start deadline 60 s)');
    expect(getCondition(out.status.conditions, 'Ready')?.message).toMatch(/^waiting to push the session branch: could not create the session branch/);
    expect((out.events ?? []).map((e) => e.reason)).toEqual([]);
    expect(out.requeueAfter).toBe(500);
    // the sandbox keeps starting: its clone waits for the host too
    expect(out.children?.[0]?.plan.update).toEqual([]);
  });

  it('between attempts a look does not push; it keeps the last attempt\'s words and looks again at the next one', () => {
    const first = decide(session({ status: 'provisioning' }), facts({ branch: away }), at(1_000)).status;
    const early = decide(session(first), facts(), at(1_200));
    expect(early.steps ?? []).toEqual([]);
    expect(early.requeueAfter).toBe(300);
    expect(getCondition(early.status.conditions, 'BranchReady')?.reason).toBe('HostUnreachable');
    expect(early.status.branchRetry).toEqual(first.branchRetry);
    expect(decide(session(first), facts(), at(1_500)).steps).toEqual([{ kind: 'push-branch', baseRef: 'main' }]);
  });

  it('the waits double up to the longest backoff', () => {
    const waits: number[] = [];
    let status: SessionStatus = { status: 'provisioning' };
    let now = at(1_000);
    for (let i = 0; i < 6; i++) {
      status = decide(session(status), facts({ branch: away }), now).status;
      const next = Date.parse(status.branchRetry!.nextAttemptAt);
      waits.push(next - now.getTime());
      now = new Date(next);
    }
    expect(waits).toEqual([500, 1_000, 2_000, 4_000, 5_000, 5_000]);
    expect(status.branchRetry?.attempts).toBe(6);
  });

  it('the host back: the branch is pushed, the retry goes, the session goes on', () => {
    const { status, now } = failRepeatedly(3);
    const out = decide(session(status), facts({ branch: { kind: 'ready', baseSha: 'a'.repeat(40), created: true } }), now);
    expect(out.status.status).toBe('provisioning');
    expect(out.status.branchRetry).toBeUndefined();
    expect(out.status.baseSha).toBe('a'.repeat(40));
    expect(getCondition(out.status.conditions, 'BranchReady')).toMatchObject({ status: 'True', reason: 'BranchPushed' });
    expect((out.events ?? []).map((e) => e.reason)).toEqual(['BranchCreated']);
  });

  it('past the start deadline (from the Session\'s creation): failed, saying the step, the cause, the attempts and git\'s last words', () => {
    const { status, attempts } = failRepeatedly(100);
    expect(status.status).toBe('failed');
    expect(status.reason).toBe('HostUnreachable');
    expect(status.branchRetry).toBeUndefined();
    const ready = getCondition(status.conditions, 'Ready')?.message ?? '';
    expect(ready).toMatch(new RegExp(`^session branch push failed: the API or the git host is unreachable, still after ${attempts} attempts over \\d+ s \\(start deadline 60 s\\); the last: could not create the session branch`));
    expect(ready).toContain('Connection refused');
    expect(attempts).toBeGreaterThan(10);
  });

  it('a permanent failure fails at once, with git\'s words as before; a later look keeps BranchReady saying why', () => {
    const refused: BranchOutcome = { kind: 'failed', reason: 'AuthenticationFailed', cause: null, message: 'could not create the session branch in x: Authentication failed' };
    const out = decide(session({ status: 'provisioning' }), facts({ branch: refused }), at(1_000));
    expect(out.status).toMatchObject({ status: 'failed', reason: 'AuthenticationFailed' });
    expect(getCondition(out.status.conditions, 'Ready')?.message).toBe(refused.message);
    expect((out.events ?? []).map((e) => e.reason)).toEqual(['Failed']);
    const later = decide(session(out.status), facts({ sandbox: { ...sandbox, spec: { ...sandbox.spec, desiredState: 'stopped' }, status: { state: 'stopped' } } }), at(5_000));
    expect(getCondition(later.status.conditions, 'BranchReady')).toMatchObject({ status: 'False', reason: 'AuthenticationFailed', message: refused.message });
  });

  it('a session that fails otherwise while its push waits drops the retry (no look is left for it)', () => {
    const { status } = failRepeatedly(2);
    const broken: Sandbox = { ...sandbox, status: { state: 'error', reason: 'DaemonFailed' } };
    const out = decide(session(status), facts({ sandbox: broken }), at(2_000));
    expect(out.status).toMatchObject({ status: 'failed', reason: 'DaemonFailed' });
    expect(out.status.branchRetry).toBeUndefined();
    expect(out.requeueAfter).toBeUndefined();
  });

  it('the boot timeline\'s branch phase goes on while the push waits, and ends when it lands', () => {
    const times = (from: number, to: number) => ({ 'push-branch': { startedAt: at(from).toISOString(), endedAt: at(to).toISOString() } });
    const first = decide(session({ status: 'provisioning' }), facts({ branch: away, stepTimes: times(900, 1_000) }), at(1_000)).status;
    expect(first.timeline?.find((p) => p.phase === 'branch')).toEqual({ phase: 'branch', startedAt: at(900).toISOString() });
    const pushed = decide(session(first), facts({ branch: { kind: 'ready', baseSha: 'b'.repeat(40), created: true }, stepTimes: times(1_500, 1_600) }), at(1_600)).status;
    expect(pushed.timeline?.find((p) => p.phase === 'branch')).toEqual({ phase: 'branch', startedAt: at(900).toISOString(), endedAt: at(1_600).toISOString() });
  });
});
