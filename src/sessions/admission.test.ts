import { describe, expect, it } from 'vitest';
import type { Session, TriggerFire } from '../resources/index.js';
import { admit, comingSession, reuseTarget, type Admission, type AdmissionInput, type FireRequest } from './admission.js';

function session(name: string, state: 'running' | 'provisioning' | 'stopped' | 'failed' | 'stopping' | 'deleting' = 'running', extra: { trigger?: string; created?: string } = {}): Session {
  return {
    apiVersion: 'svc.dev/v1alpha1', kind: 'Session',
    metadata: {
      name, namespace: 'acct', creationTimestamp: extra.created ?? '2030-01-01T00:00:00Z',
      labels: { 'svc.dev/project': 'web', ...(extra.trigger ? { 'svc.dev/trigger': extra.trigger } : {}) },
      ...(state === 'deleting' ? { deletionTimestamp: '2030-01-01T00:00:09Z' } : {}),
    },
    spec: { projectRef: { name: 'web' }, agent: 'a', baseRef: 'main', desiredState: state === 'stopped' || state === 'stopping' ? 'stopped' : 'running' },
    status: { status: state === 'stopping' || state === 'deleting' ? 'running' : state },
  };
}

function fire(name: string, second: number, extra: { project?: string; phase?: 'queued' | 'fired' | 'failed'; created?: string } = {}): TriggerFire {
  return {
    apiVersion: 'svc.dev/v1alpha1', kind: 'TriggerFire',
    metadata: {
      name, namespace: 'acct', labels: { 'svc.dev/project': extra.project ?? 'web', 'svc.dev/trigger': 'web-hook' },
      ...(extra.created ? { creationTimestamp: extra.created } : {}),
    },
    spec: { triggerRef: { name: 'web-hook' }, source: 'webhook', firedAt: `2030-01-01T00:00:${String(second).padStart(2, '0')}.000Z`, sessionName: `${name}-s` },
    ...(extra.phase ? { status: { phase: extra.phase } } : {}),
  };
}

const asFire = (f: TriggerFire, over: Partial<FireRequest> = {}): FireRequest => ({ kind: 'fire', fire: f, sessionMode: 'fresh', promised: false, ...over });

function input(over: Partial<AdmissionInput>): AdmissionInput {
  return { cap: 2, queueDepth: 100, sessions: [], fires: [], request: { kind: 'session' }, ...over };
}

/** start | reprompt:<name>:<wake> | queue:<position> | full */
function short(a: Admission): string {
  if (a.kind === 'reprompt') return `reprompt:${a.session.metadata.name}:${a.wake}`;
  if (a.kind === 'queue') return `queue:${a.position}`;
  return a.kind;
}

describe('admission of a new session (the session route)', () => {
  it.each<[string, number, Session[], string]>([
    ['free slot', 2, [session('a')], 'start'],
    ['cap reached', 2, [session('a'), session('b', 'provisioning')], 'full'],
    ['cap 0', 0, [], 'full'],
    ['stopped, failed, stopping and deleting sessions hold no slot', 1, [session('a', 'stopped'), session('b', 'failed'), session('c', 'stopping'), session('d', 'deleting')], 'start'],
  ])('%s', (_name, cap, sessions, expected) => {
    expect(short(admit(input({ cap, sessions })))).toBe(expected);
  });

  it('queued fires do not hold back an interactive start; the refusal says how to get a slot', () => {
    expect(admit(input({ cap: 1, fires: [fire('q', 1, { phase: 'queued' })] }))).toEqual({ kind: 'start' });
    expect(admit(input({ cap: 1, sessions: [session('a')] }))).toMatchObject({ kind: 'full', reason: expect.stringContaining('limit of 1 concurrent session(s): stop one') });
  });
});

describe('admission of a fire: cap and queue (FIFO over the namespace)', () => {
  const a = fire('a', 1);
  const b = fire('b', 2);
  const c = fire('c', 3);
  it.each<[string, number, Session[], TriggerFire, TriggerFire[], string]>([
    ['alone, free slot', 1, [], a, [a], 'start'],
    ['alone, cap reached', 1, [session('s')], a, [a], 'queue:1'],
    ['cap 0', 0, [], a, [a], 'queue:1'],
    ['first of three at cap 1', 1, [], a, [c, a, b], 'start'],
    ['second of three at cap 1', 1, [], b, [c, a, b], 'queue:1'],
    ['third of three at cap 1', 1, [], c, [c, a, b], 'queue:2'],
    ['third of three at cap 2', 2, [], c, [c, a, b], 'queue:1'],
    ['fired and failed fires are not in the queue', 1, [], c, [fire('a', 1, { phase: 'fired' }), fire('b', 2, { phase: 'failed' }), c], 'start'],
    ['a queued fire ahead waits first', 1, [], c, [fire('a', 1, { phase: 'queued' }), c], 'queue:1'],
    ['a fire later in the queue does not hold this one back', 1, [], a, [a, fire('z', 9, { phase: 'queued' })], 'start'],
    ['a new fire (not stored yet) queues behind every stored one', 2, [session('s')], fire('new', 9), [a], 'queue:1'],
  ])('%s', (_name, cap, sessions, f, fires, expected) => {
    expect(short(admit(input({ cap, sessions, fires, request: asFire(f) })))).toBe(expected);
  });

  it('ties: the same instant queues by creation time, then by name', () => {
    const early = fire('y', 5, { created: '2030-01-01T00:00:05Z' });
    const late = fire('x', 5, { created: '2030-01-01T00:00:06Z' });
    const sameTimeA = fire('m', 5, { created: '2030-01-01T00:00:06Z' });
    const fires = [late, early, sameTimeA];
    const place = (f: TriggerFire) => short(admit(input({ cap: 0, fires, request: asFire(f) })));
    expect([place(early), place(sameTimeA), place(late)]).toEqual(['queue:1', 'queue:2', 'queue:3']);
  });

  it('the reason names the cap and the position', () => {
    expect(admit(input({ cap: 1, sessions: [session('s')], fires: [a], request: asFire(a) }))).toMatchObject({
      kind: 'queue', position: 1, reason: "the account's concurrent-session cap (1) is reached; position 1 in the queue, starts when a session stops",
    });
  });
});

describe('admission of a fire: the queue depth of its project', () => {
  const waiting = [1, 2].map((i) => fire(`q${i}`, i, { phase: 'queued' }));
  const otherProject = [3, 4, 5].map((i) => fire(`o${i}`, i, { project: 'api', phase: 'queued' }));
  const fresh = fire('new', 9);
  it.each<[string, number, number, TriggerFire[], boolean, string]>([
    ['depth reached: a new fire is refused', 0, 2, [...waiting], false, 'full'],
    ['one place left', 0, 3, [...waiting], false, 'queue:3'],
    ['fires of another project do not count against this one', 0, 3, [...waiting, ...otherProject], false, 'queue:6'],
    ['pending fires that will start in the free slots are not waiting', 2, 1, [fire('p1', 1), fire('p2', 2)], false, 'queue:1'],
    ['pending fires not yet handled count like queued ones', 0, 2, [fire('p1', 1), fire('p2', 2)], false, 'full'],
    ['a promised fire (answered 202, or already queued) is never refused', 0, 2, [...waiting], true, 'queue:3'],
  ])('%s', (_name, cap, depth, fires, promised, expected) => {
    expect(short(admit(input({ cap, queueDepth: depth, fires: [...fires, ...(promised ? [fresh] : [])], request: asFire(fresh, { promised }) })))).toBe(expected);
  });

  it('the refusal names the project, the depth and the cap', () => {
    expect(admit(input({ cap: 0, queueDepth: 2, fires: waiting, request: asFire(fresh) }))).toEqual({
      kind: 'full', reason: 'the queue of project web is full (2 fires wait for the concurrent-session cap of 0)',
    });
  });
});

describe('admission of a fire: reuse', () => {
  const own = fire('f', 5);
  const reuse = (sessions: Session[], cap: number, fires: TriggerFire[] = [own]) => short(admit(input({ cap, sessions, fires, request: asFire(own, { sessionMode: 'reuse' }) })));
  it.each<[string, Session[], number, string]>([
    ['re-prompts the running last session without a slot', [session('old', 'running', { trigger: 'web-hook', created: '2030-01-01T00:00:00Z' }), session('last', 'running', { trigger: 'web-hook', created: '2030-01-01T00:00:03Z' })], 0, 'reprompt:last:false'],
    ['wakes a stopped last session when a slot is free', [session('last', 'stopped', { trigger: 'web-hook' })], 5, 'reprompt:last:true'],
    ['a stopped session waits for a slot to wake', [session('last', 'stopped', { trigger: 'web-hook' })], 0, 'queue:1'],
    ['a failed last session is not reused: a fresh one starts', [session('last', 'failed', { trigger: 'web-hook' })], 5, 'start'],
    ['a session being deleted is not reused', [session('last', 'deleting', { trigger: 'web-hook' })], 5, 'start'],
    ['sessions of other triggers are not reused', [session('other', 'running', { trigger: 'other-hook' })], 5, 'start'],
    ['the fire\'s own session (a retry) is not a reuse target', [session('f-s', 'running', { trigger: 'web-hook' })], 5, 'start'],
  ])('%s', (_name, sessions, cap, expected) => {
    expect(reuse(sessions, cap)).toBe(expected);
  });

  describe('a burst: fires after one promised a new session follow it', () => {
    const promised = (name: string, second: number, session: string, phase?: 'queued' | 'fired'): TriggerFire => {
      const f = fire(name, second, phase ? { phase } : {});
      return { ...f, metadata: { ...f.metadata, annotations: { 'svc.dev/answer': JSON.stringify({ status: 'fired', session_id: session }) } } };
    };
    const next = fire('next', 9);
    const ask = (fires: TriggerFire[], sessions: Session[] = [], over: Partial<FireRequest> = {}) =>
      admit(input({ cap: 0, sessions, fires, request: asFire(next, { sessionMode: 'reuse', ...over }) }));

    it('a new delivery follows the newest session promised and not made yet (no slot needed)', () => {
      expect(ask([promised('a', 1, 'a-s'), promised('b', 2, 'b-s')])).toEqual({ kind: 'follow', session: 'b-s' });
      expect(comingSession('web-hook', [promised('a', 1, 'a-s')], [], 'next')).toBe('a-s');
    });

    it.each<[string, TriggerFire[], Session[]]>([
      ['the promised session exists: it is re-prompted as any last session', [promised('a', 1, 'a-s')], [session('a-s', 'running', { trigger: 'web-hook' })]],
      ['the promising fire is done (fired or failed): nothing is coming', [promised('a', 1, 'a-s', 'fired')], []],
      ['a fire answered with a re-prompt promised no session of its own', [promised('a', 1, 'other')], []],
      ['a fire answered queued promised no session', [fire('a', 1, { phase: 'queued' })], []],
    ])('does not follow when %s', (_name, fires, sessions) => {
      expect(ask(fires, sessions).kind).not.toBe('follow');
    });

    it('a fire of another trigger, or a fresh trigger\'s fire, never follows', () => {
      const other = promised('o', 1, 'o-s');
      other.metadata.labels = { ...other.metadata.labels, 'svc.dev/trigger': 'other-hook' };
      expect(ask([other]).kind).not.toBe('follow');
      expect(admit(input({ cap: 0, fires: [promised('a', 1, 'a-s')], request: asFire(next, { sessionMode: 'fresh' }) })).kind).toBe('queue');
    });

    it('a fire told a session keeps to that one: it follows it, or none when it is no longer coming', () => {
      const fires = [promised('a', 1, 'a-s'), promised('b', 2, 'b-s')];
      expect(ask(fires, [], { promisedSession: 'a-s' })).toEqual({ kind: 'follow', session: 'a-s' });
      expect(ask(fires, [], { promisedSession: 'gone-s' }).kind).not.toBe('follow');
    });
  });

  it('ties: two sessions created in the same second, the greater name is the last one', () => {
    const sessions = [session('b-second', 'running', { trigger: 'web-hook' }), session('a-first', 'running', { trigger: 'web-hook' })];
    expect(reuseTarget('web-hook', sessions)?.metadata.name).toBe('b-second');
    expect(reuseTarget('web-hook', [...sessions].reverse())?.metadata.name).toBe('b-second');
    expect(reuse(sessions, 0)).toBe('reprompt:b-second:false');
  });
});
