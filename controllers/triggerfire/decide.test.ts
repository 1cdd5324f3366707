import { describe, expect, it } from 'vitest';
import type { PendingPrompt, Project, Session, Trigger, TriggerFire } from '../../src/resources/index.js';
import { FOLLOW_RETRY_MS, decideFire, fireStatus, freshSession, type FireFacts } from './decide.js';

const NOW = new Date('2030-01-01T00:00:10Z');
const project: Project = { apiVersion: 'svc.dev/v1alpha1', kind: 'Project', metadata: { name: 'web', namespace: 'acct', uid: 'p-uid' }, spec: { repoUrl: '/r', defaultBranch: 'trunk' } };

function trigger(extra: Partial<Trigger['spec']> = {}): Trigger {
  return {
    apiVersion: 'svc.dev/v1alpha1', kind: 'Trigger', metadata: { name: 'web-hook', namespace: 'acct', uid: 't-uid' },
    spec: { slug: 'hook', type: 'webhook', prompt: 'Push to {{ body.ref }} by {{ actor }}', name: 'hook', agent: 'coder', sessionMode: 'fresh', enabled: true, timezone: 'UTC', secretEnv: 'S', projectRef: { name: 'web' }, ...extra },
  };
}

function fire(name: string, firedAt: string, extra: Partial<TriggerFire> = {}): TriggerFire {
  return {
    apiVersion: 'svc.dev/v1alpha1', kind: 'TriggerFire',
    metadata: { name, namespace: 'acct', uid: `${name}-uid`, labels: { 'svc.dev/project': 'web', 'svc.dev/trigger': 'web-hook' } },
    spec: { triggerRef: { name: 'web-hook' }, source: 'webhook', firedAt, variables: { body: { ref: 'main' } }, sessionName: `${name}-session` },
    ...extra,
  };
}

function session(name: string, status?: Session['status'], extra: Partial<Session['spec']> = {}, created = '2030-01-01T00:00:00Z'): Session {
  return {
    apiVersion: 'svc.dev/v1alpha1', kind: 'Session',
    metadata: { name, namespace: 'acct', creationTimestamp: created, labels: { 'svc.dev/trigger': 'web-hook' } },
    spec: { projectRef: { name: 'web' }, agent: 'coder', baseRef: 'trunk', desiredState: 'running', ...extra },
    ...(status ? { status } : {}),
  };
}

interface FireObservation extends FireFacts { fire: TriggerFire }

function observe(over: Partial<FireObservation> = {}): FireObservation {
  const f = over.fire ?? fire('f1', '2030-01-01T00:00:05.000Z');
  return { fire: f, trigger: trigger(), project, sessions: [], fires: [f], cap: 10, queueDepth: 100, ...over };
}

type Action =
  | { kind: 'none' } | { kind: 'fail'; reason: string } | { kind: 'queue'; position: number }
  | { kind: 'create'; session: Session } | { kind: 'reprompt'; session: Session; prompt: PendingPrompt; wake: boolean };

/** The outcome as the action it asks for: a step (create, reprompt), a status (queued, failed), or nothing. */
function decide(obs: FireObservation): Action {
  const { fire: f, ...facts } = obs;
  // a failure is first told on the trigger (a step), then written
  const outcome = decideFire(f, { ...facts, toldTrigger: true }, NOW);
  const step = outcome.steps?.[0];
  if (step?.kind === 'create') return { kind: 'create', session: step.session };
  if (step?.kind === 'reprompt') return { kind: 'reprompt', session: obs.sessions.find((s) => s.metadata.name === step.session)!, prompt: step.prompt, wake: step.wake };
  if (outcome.status.phase === 'failed' && f.status?.phase !== 'failed') return { kind: 'fail', reason: outcome.status.conditions!.find((c) => c.type === 'Ready')!.reason };
  if (outcome.status.phase === 'queued') return { kind: 'queue', position: outcome.status.queuePosition! };
  if (outcome.status.phase === 'fired' && f.status?.phase !== 'fired') return { kind: 'create', session: obs.sessions.find((s) => s.metadata.name === outcome.status.sessionName)! };
  return { kind: 'none' };
}

describe('decideFire', () => {
  it('creates the session with the rendered prompt, the agent, model, base ref and trigger ref', () => {
    const action = decide(observe({ trigger: trigger({ model: 'openai/gpt-5' }) }));
    expect(action.kind).toBe('create');
    const s = (action as { session: Session }).session;
    expect(s.metadata).toMatchObject({ name: 'f1-session', namespace: 'acct', labels: { 'svc.dev/project': 'web', 'svc.dev/trigger': 'web-hook' }, ownerReferences: [{ kind: 'Project', uid: 'p-uid', controller: true }] });
    expect(s.spec).toEqual({ projectRef: { name: 'web' }, agent: 'coder', baseRef: 'trunk', model: 'openai/gpt-5', initialPrompt: 'Push to main by ', desiredState: 'running', triggerRef: { name: 'web-hook' } });
  });

  it('a manual fire records its actor as createdBy', () => {
    const f = fire('m', '2030-01-01T00:00:05.000Z', {});
    f.spec.source = 'manual';
    f.spec.variables = { actor: 'user-1' };
    expect(freshSession(f, trigger(), project, 'p').spec.createdBy).toBe('user-1');
  });

  it.each<[string, Partial<FireObservation>, string]>([
    ['trigger gone', { trigger: undefined }, 'fail:TriggerNotFound'],
    ['project gone', { project: undefined }, 'fail:ProjectNotFound'],
    ['already fired', { fire: fire('f1', '2030-01-01T00:00:05.000Z', { status: { phase: 'fired', sessionName: 'x' } }) }, 'none'],
    ['already failed', { fire: fire('f1', '2030-01-01T00:00:05.000Z', { status: { phase: 'failed', reason: 'x' } }) }, 'none'],
    ['cap reached', { cap: 1, sessions: [session('busy')] }, 'queue:1'],
    ['cap 0', { cap: 0 }, 'queue:1'],
    ['stopped sessions hold no slot', { cap: 1, sessions: [session('done', { status: 'stopped' }), session('dead', { status: 'failed' })] }, 'create'],
    ['its session exists already (a retry)', { cap: 0, sessions: [session('f1-session')], ownSession: session('f1-session') }, 'create'],
  ])('%s', (_name, over, expected) => {
    const action = decide(observe(over));
    const got = action.kind === 'fail' ? `fail:${action.reason}` : action.kind === 'queue' ? `queue:${action.position}` : action.kind;
    expect(got).toBe(expected);
  });

  it('FIFO: fires ahead take the free slots first; positions count from 1', () => {
    const a = fire('a', '2030-01-01T00:00:01.000Z');
    const b = fire('b', '2030-01-01T00:00:02.000Z');
    const c = fire('c', '2030-01-01T00:00:03.000Z');
    const fires = [c, a, b];
    const pos = (f: TriggerFire, cap: number, sessions: Session[] = []) => {
      const action = decide(observe({ fire: f, fires, cap, sessions }));
      return action.kind === 'queue' ? action.position : action.kind;
    };
    expect([pos(a, 1), pos(b, 1), pos(c, 1)]).toEqual(['create', 1, 2]);
    expect([pos(a, 1, [session('s')]), pos(b, 1, [session('s')]), pos(c, 1, [session('s')])]).toEqual([1, 2, 3]);
    expect([pos(a, 2), pos(b, 2), pos(c, 2)]).toEqual(['create', 'create', 1]);
  });

  it('beyond the queue depth of the project a new fire fails', () => {
    const queued = [1, 2].map((i) => fire(`q${i}`, `2030-01-01T00:00:0${i}.000Z`, { status: { phase: 'queued', queuePosition: i } }));
    const f = fire('new', '2030-01-01T00:00:09.000Z');
    expect(decide(observe({ fire: f, fires: [...queued, f], cap: 0, queueDepth: 2 }))).toMatchObject({ kind: 'fail', reason: 'QueueFull' });
    expect(decide(observe({ fire: f, fires: [...queued, f], cap: 0, queueDepth: 3 }))).toMatchObject({ kind: 'queue', position: 3 });
  });

  describe('reuse', () => {
    const reuse = trigger({ sessionMode: 'reuse' });
    it.each<[string, Session[], number, string]>([
      ['re-prompts the running last session without a slot', [session('old', { status: 'running' }, {}, '2030-01-01T00:00:00Z'), session('last', { status: 'running' }, {}, '2030-01-01T00:00:03Z')], 0, 'reprompt:last:false'],
      ['wakes a stopped last session', [session('last', { status: 'stopped' }, { desiredState: 'stopped' })], 5, 'reprompt:last:true'],
      ['a stopped session needs a slot to wake', [session('last', { status: 'stopped' }, { desiredState: 'stopped' })], 0, 'queue'],
      ['falls back to fresh when the last one failed', [session('last', { status: 'failed' })], 5, 'create:f1-session'],
      ['falls back to fresh when there is none', [], 5, 'create:f1-session'],
      ['ignores sessions of other triggers', [{ ...session('other'), metadata: { name: 'other', namespace: 'acct', labels: { 'svc.dev/trigger': 'x' } } }], 5, 'create:f1-session'],
    ])('%s', (_name, sessions, cap, expected) => {
      const action = decide(observe({ trigger: reuse, sessions, cap }));
      const got = action.kind === 'reprompt' ? `reprompt:${action.session.metadata.name}:${action.wake}` : action.kind === 'create' ? `create:${action.session.metadata.name}` : action.kind;
      expect(got).toBe(expected);
      if (action.kind === 'reprompt') expect(action.prompt).toMatchObject({ id: 'fire-f1-uid', text: 'Push to main by ', source: 'trigger' });
    });

    // the 202 is a promise: the session it named is the one that comes
    const answeredWith = (answer: string) => fire('f1', '2030-01-01T00:00:05.000Z', { metadata: { name: 'f1', namespace: 'acct', uid: 'f1-uid', labels: { 'svc.dev/project': 'web', 'svc.dev/trigger': 'web-hook' }, annotations: { 'svc.dev/answer': answer } } });
    it.each<[string, string, string]>([
      ['answered with its own new session (the last one did not exist yet): creates it, re-prompts none', '{"status":"fired","session_id":"f1-session"}', 'create:f1-session'],
      ['answered with the last session: re-prompts it', '{"status":"fired","session_id":"last"}', 'reprompt:last:false'],
      ['answered queued (no session named): reuses as it can now', '{"status":"queued","reason":"cap"}', 'reprompt:last:false'],
    ])('%s', (_name, answer, expected) => {
      const f = answeredWith(answer);
      const action = decide(observe({ fire: f, fires: [f], trigger: reuse, sessions: [session('last', { status: 'running' })], cap: 5 }));
      expect(action.kind === 'reprompt' ? `reprompt:${action.session.metadata.name}:${action.wake}` : action.kind === 'create' ? `create:${action.session.metadata.name}` : action.kind).toBe(expected);
    });

    // a burst: the first delivery was promised a new session, the next ones were answered with it
    describe('a fire answered with the session an earlier fire was promised', () => {
      const first = fire('a', '2030-01-01T00:00:01.000Z', { metadata: { name: 'a', namespace: 'acct', uid: 'a-uid', labels: { 'svc.dev/project': 'web', 'svc.dev/trigger': 'web-hook' }, annotations: { 'svc.dev/answer': '{"status":"fired","session_id":"a-session"}' } } });
      const second = fire('b', '2030-01-01T00:00:02.000Z', { metadata: { name: 'b', namespace: 'acct', uid: 'b-uid', labels: { 'svc.dev/project': 'web', 'svc.dev/trigger': 'web-hook' }, annotations: { 'svc.dev/answer': '{"status":"fired","session_id":"a-session"}' } } });

      it('waits while that session is not made, without a status of its own, and looks again', () => {
        const outcome = decideFire(second, { trigger: reuse, project, sessions: [], fires: [first, second], cap: 5, queueDepth: 100 }, NOW);
        expect(outcome).toEqual({ status: {}, requeueAfter: FOLLOW_RETRY_MS });
      });

      it('re-prompts it once it exists; the first fire creates it', () => {
        const made = session('a-session', { status: 'provisioning' }, {}, '2030-01-01T00:00:01Z');
        expect(decide(observe({ fire: second, fires: [first, second], trigger: reuse, sessions: [made], cap: 5 }))).toMatchObject({ kind: 'reprompt', session: { metadata: { name: 'a-session' } }, wake: false });
        expect(decide(observe({ fire: first, fires: [first, second], trigger: reuse, sessions: [], cap: 5 }))).toMatchObject({ kind: 'create', session: { metadata: { name: 'a-session' } } });
      });

      it('starts its own session when the first fire failed without making it', () => {
        const failedFirst = { ...first, status: { phase: 'failed' as const, reason: 'SessionRejected: no' } };
        expect(decide(observe({ fire: second, fires: [failedFirst, second], trigger: reuse, sessions: [], cap: 5 }))).toMatchObject({ kind: 'create', session: { metadata: { name: 'b-session' } } });
      });
    });
  });
});

describe('fireStatus', () => {
  it('fired, queued and failed set phase, reason, position, session and Ready', () => {
    const f = fire('f1', '2030-01-01T00:00:05.000Z');
    expect(fireStatus(f, { phase: 'fired', sessionName: 's', reprompted: false }, NOW)).toMatchObject({ phase: 'fired', sessionName: 's', conditions: [{ type: 'Ready', status: 'True', reason: 'Fired' }] });
    expect(fireStatus(f, { phase: 'queued', position: 2, message: 'cap' }, NOW)).toMatchObject({ phase: 'queued', queuePosition: 2, reason: 'cap', conditions: [{ type: 'Ready', status: 'False', reason: 'Queued' }] });
    const failed = fireStatus(f, { phase: 'failed', reason: 'QueueFull', message: 'full' }, NOW);
    expect(failed).toMatchObject({ phase: 'failed', reason: 'QueueFull: full' });
    expect(failed.queuePosition).toBeUndefined();
  });
});

describe('a 202 is a promise kept', () => {
  const answered = (name: string, second: number) => fire(name, `2030-01-01T00:00:0${second}.000Z`, { metadata: { name, namespace: 'acct', uid: `${name}-uid`, labels: { 'svc.dev/project': 'web', 'svc.dev/trigger': 'web-hook' }, annotations: { 'svc.dev/answer': '{"status":"queued","reason":"cap"}' } } });

  it('a fire answered with a 202 waits beyond the queue depth instead of being dropped; a cron fire is refused (QueueFull)', () => {
    const ahead = [1, 2, 3].map((i) => fire(`q${i}`, `2030-01-01T00:00:0${i}.000Z`, { status: { phase: 'queued' } }));
    const promised = answered('late', 8);
    expect(decide(observe({ fire: promised, fires: [...ahead, promised], cap: 0, queueDepth: 2 }))).toEqual({ kind: 'queue', position: 4 });
    const cron = fire('cron', '2030-01-01T00:00:09.000Z');
    expect(decide(observe({ fire: cron, fires: [...ahead, cron], cap: 0, queueDepth: 2 }))).toMatchObject({ kind: 'fail', reason: 'QueueFull' });
    // once queued, never dropped either
    const queuedCron = fire('cron', '2030-01-01T00:00:09.000Z', { status: { phase: 'queued', queuePosition: 4 } });
    expect(decide(observe({ fire: queuedCron, fires: [...ahead, queuedCron], cap: 0, queueDepth: 2 }))).toEqual({ kind: 'queue', position: 4 });
  });

  it('after its step: fired with the session and one Fired event; a refused Session fails the fire (told on the trigger first)', () => {
    const f = fire('f1', '2030-01-01T00:00:05.000Z');
    const facts = observe({ fire: f });
    const created = decideFire(f, { ...facts, started: { session: 'f1-session', reprompted: false, woke: false } }, NOW);
    expect(created.steps ?? []).toEqual([]);
    expect(created.status).toMatchObject({ phase: 'fired', sessionName: 'f1-session' });
    expect(created.events).toEqual([{ type: 'Normal', reason: 'Fired', message: 'created session f1-session' }]);
    const woken = decideFire(f, { ...facts, started: { session: 'last', reprompted: true, woke: true } }, NOW);
    expect(woken.events).toEqual([{ type: 'Normal', reason: 'Fired', message: 're-prompted session last and woke it' }]);
    const refused = { ...facts, rejected: { reason: 'SessionRejected', message: 'the cluster refused session f1-session: bad model' } };
    expect(decideFire(f, refused, NOW).steps).toEqual([{ kind: 'tell-trigger', reason: 'SessionRejected', message: 'fire f1: the cluster refused session f1-session: bad model' }]);
    const told = decideFire(f, { ...refused, toldTrigger: true }, NOW);
    expect(told.status).toMatchObject({ phase: 'failed', reason: 'SessionRejected: the cluster refused session f1-session: bad model' });
    expect(told.events).toEqual([{ type: 'Warning', reason: 'SessionRejected', message: 'the cluster refused session f1-session: bad model' }]);
  });

  it('a queued fire says so once (Queued event), keeps its place in status and looks again later', () => {
    const f = fire('f1', '2030-01-01T00:00:05.000Z');
    const first = decideFire(f, { ...observe({ fire: f, cap: 0 }) }, NOW);
    expect(first).toMatchObject({ status: { phase: 'queued', queuePosition: 1 }, events: [{ reason: 'Queued' }], requeueAfter: 30_000 });
    const again = decideFire({ ...f, status: first.status }, { ...observe({ fire: f, cap: 0 }) }, NOW);
    expect(again.events).toEqual([]);
  });
});
