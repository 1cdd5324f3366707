// Retention of a trigger's fires (DESIGN §8.4): which finished fires go, oldest first, what is
// kept for the pause rule, and the delivery ids recorded in the ledger before a fire goes.
import { describe, expect, it } from 'vitest';
import {
  DELIVERY_LEDGER, FIRE_ANSWER_ANNOTATION, LEDGER_PAGE_ENTRIES, SESSION, TRIGGER_FIRE, ledgerAnswer, ledgerPageOf, newLedgerPage,
  type ChangeRequest, type ConfigMapObject, type Project, type Session, type Trigger, type TriggerFire,
} from '../../src/resources/index.js';
import { decideTrigger, firesToPrune, ledgerWrites, sessionsToPrune, SESSION_CACHE_GRACE_MS } from './decide.js';
import { nextTriggerStatus } from './status.js';

const NOW = new Date('2030-01-01T12:00:00Z');
const trigger: Trigger = {
  apiVersion: 'svc.dev/v1alpha1', kind: 'Trigger',
  metadata: { name: 'web-hook', namespace: 'acct', uid: 't-uid', generation: 1, creationTimestamp: '2030-01-01T00:00:00Z' },
  spec: { slug: 'hook', type: 'webhook', prompt: 'p', name: 'hook', agent: 'a', sessionMode: 'fresh', enabled: true, timezone: 'UTC', secretEnv: 'S', projectRef: { name: 'web' } },
};

/** Fire `i` at minute i of the hour before NOW (later = newer). */
const at = (i: number) => new Date(NOW.getTime() - 3600_000 + i * 60_000).toISOString();

type Kind = 'ran' | 'failed' | 'starting' | 'queued' | 'pending' | 'refused' | 'full' | 'gone' | 'unseen';

/** A fire of kind: its session ran / failed / still starting, queued, not looked at, refused by the cluster, QueueFull, session gone, session not in the cache yet. */
function fire(i: number, kind: Kind, extra: Partial<TriggerFire['spec']> = {}): TriggerFire {
  const name = `f${i}`;
  const base: TriggerFire = {
    apiVersion: 'svc.dev/v1alpha1', kind: 'TriggerFire',
    metadata: { name, namespace: 'acct', annotations: { [FIRE_ANSWER_ANNOTATION]: JSON.stringify({ status: 'fired', session_id: `${name}-s` }) } },
    spec: { triggerRef: { name: 'web-hook' }, source: 'webhook', firedAt: at(i), sessionName: `${name}-s`, ...extra },
  };
  const firedAt = kind === 'unseen' ? new Date(NOW.getTime() - SESSION_CACHE_GRACE_MS / 2).toISOString() : at(i);
  const fired = { phase: 'fired' as const, sessionName: `${name}-s`, conditions: [{ type: 'Ready', status: 'True' as const, reason: 'Fired', message: '', lastTransitionTime: firedAt }] };
  switch (kind) {
    case 'queued': return { ...base, status: { phase: 'queued', queuePosition: 1 } };
    case 'pending': return base;
    case 'refused': return { ...base, status: { phase: 'failed', reason: 'SessionRejected: no' } };
    case 'full': return { ...base, status: { phase: 'failed', reason: 'QueueFull: the queue is full' } };
    default: return { ...base, status: fired };
  }
}

function sessionsOf(fires: { fire: TriggerFire; kind: Kind }[]): Map<string, Session> {
  const status = { ran: 'stopped', failed: 'failed', starting: 'provisioning' } as const;
  const out = new Map<string, Session>();
  for (const { fire: f, kind } of fires) {
    if (!(kind in status)) continue;
    const name = f.spec.sessionName;
    out.set(name, { apiVersion: 'svc.dev/v1alpha1', kind: 'Session', metadata: { name, namespace: 'acct' }, spec: { projectRef: { name: 'web' }, agent: 'a', baseRef: 'main', desiredState: 'running' }, status: { status: status[kind as keyof typeof status] } });
  }
  return out;
}

/** The fires of `kinds` (oldest first) and the names of those pruned. */
function prune(kinds: Kind[], history: number, maxFailures = 3): string[] {
  const made = kinds.map((kind, i) => ({ fire: fire(i, kind), kind }));
  return firesToPrune(made.map((m) => m.fire), sessionsOf(made), { history, maxFailures }, NOW).map((f) => f.metadata.name!);
}

describe('firesToPrune', () => {
  it.each<[string, Kind[], number, string[]]>([
    ['nothing beyond the history', ['ran', 'ran', 'ran'], 3, []],
    ['finished fires beyond the history go, oldest first', ['ran', 'ran', 'ran', 'ran', 'ran'], 3, ['f0', 'f1']],
    ['a history below the failure limit is kept to', ['ran', 'ran', 'ran', 'ran'], 1, ['f0', 'f1', 'f2']],
    ['a history of 0 keeps the newest fire (the instant the trigger goes on from)', ['ran', 'ran', 'ran', 'ran'], 0, ['f0', 'f1', 'f2']],
    ['the run of failures the pause rule counts stays beyond the history', ['ran', 'ran', 'failed', 'failed'], 1, ['f0', 'f1']],
    ['... up to the failure limit', ['failed', 'failed', 'failed', 'failed', 'failed'], 1, ['f0', 'f1']],
    ['queued and unseen fires are never pruned, nor counted', ['queued', 'pending', 'ran', 'ran', 'ran', 'ran'], 3, ['f2']],
    ['a fire whose session is still starting is never pruned', ['starting', 'ran', 'ran', 'ran', 'ran'], 3, ['f1']],
    ['a fired fire whose session the cache does not show yet is kept (it may be starting)', ['unseen', 'ran', 'ran', 'ran', 'ran'], 3, ['f1']],
    ['a fired fire whose session is gone for longer is finished', ['gone', 'ran', 'ran', 'ran', 'ran'], 3, ['f0', 'f1']],
    ['failed fires are finished (refused by the cluster, or failed sessions)', ['refused', 'failed', 'ran', 'ran', 'ran'], 3, ['f0', 'f1']],
    // QueueFull fires count for the history but not for the pause rule: the three failures behind them stay
    ['the newest three decided fires stay behind capacity refusals', ['failed', 'failed', 'failed', 'full', 'full', 'full'], 3, []],
    ['... and older ones go', ['ran', 'failed', 'failed', 'failed', 'full', 'full', 'full'], 3, ['f0']],
  ])('%s', (_name, kinds, history, pruned) => {
    expect(prune(kinds, history)).toEqual(pruned);
  });

  it('keeps as many failed fires as the failure limit (SVC_TRIGGER_MAX_FAILURES)', () => {
    const kinds: Kind[] = ['failed', 'failed', 'failed', 'failed', 'full', 'full'];
    expect(prune(kinds, 1, 4)).toEqual(['f4']);
    expect(prune(kinds, 1, 2)).toEqual(['f0', 'f1', 'f4']);
  });

  // The pause rule gives the same answer with and without the pruned fires; and, where said, also
  // after every kept session fails later (a kept success that fails later continues a run that
  // may have been pruned: the price of keeping to a small history, decide.ts).
  it.each<[string, Kind[], number, boolean]>([
    ['a success among the kept ends the run before the pruned ones', ['failed', 'failed', 'ran', 'failed', 'failed'], 2, false],
    ['... and a history that keeps the success keeps that answer later too', ['failed', 'failed', 'ran', 'failed', 'failed'], 3, true],
    ['three failures among the kept pause it with or without the older ones', ['ran', 'failed', 'failed', 'failed', 'full'], 1, true],
    ['capacity refusals never push failures out', ['failed', 'failed', 'failed', 'full', 'full', 'full', 'full'], 2, true],
    ['still-starting fires in between stay', ['failed', 'starting', 'failed', 'failed', 'starting'], 0, true],
  ])('the pause rule does not change: %s', (_name, kinds, history, laterToo) => {
    const made = kinds.map((kind, i) => ({ fire: fire(i, kind), kind }));
    const sessions = sessionsOf(made);
    const all = made.map((m) => m.fire);
    const pruned = new Set(firesToPrune(all, sessions, { history, maxFailures: 3 }, NOW).map((f) => f.metadata.name));
    const kept = all.filter((f) => !pruned.has(f.metadata.name));
    const paused = (fires: TriggerFire[], s: Map<string, Session>) => nextTriggerStatus({ trigger, fires, sessions: s, now: NOW }).status.paused;
    expect(paused(kept, sessions)).toBe(paused(all, sessions));
    // every kept session that ran fails later, and every starting one too: still the same answer
    if (!laterToo) return;
    const later = new Map([...sessions].map(([n, s]) => [n, { ...s, status: { status: 'failed' as const } }]));
    expect(paused(kept, later)).toBe(paused(all, later));
  });
});

describe('the delivery ledger', () => {
  const delivered = (i: number, kind: Kind = 'ran') => fire(i, kind, { deliveryId: `d-${i}` });

  it('records every answer, by the hour of the fire, the last page first while it has room', () => {
    const full = newLedgerPage(trigger, '2030010111', 0, Object.fromEntries(Array.from({ length: LEDGER_PAGE_ENTRIES - 1 }, (_, i) => [`x${i}`, '{}'])));
    const writes = ledgerWrites(trigger, [full], [delivered(1), delivered(2)]);
    expect(writes.map((w) => [w.page.metadata.name, w.create, Object.keys(w.entries)])).toEqual([
      ['web-hook-deliveries-2030010111-0', false, ['f1']],
      ['web-hook-deliveries-2030010111-1', true, ['f2']],
    ]);
    expect(ledgerPageOf(writes[1]!.page)).toEqual({ hour: '2030010111', page: 1 });
    expect(writes[1]!.page.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'Trigger', uid: 't-uid', controller: true });
    expect(ledgerAnswer(writes.map((w) => ({ ...w.page, data: w.entries })), 'f2')).toEqual({ status: 'fired', session_id: 'f2-s' });
  });

  it('a fire with a delivery id goes only after its answer is recorded; a page expires 72 h after its hour', () => {
    const fires = [delivered(0), delivered(1), delivered(2)];
    const facts = { fires, sessions: sessionsOf(fires.map((f) => ({ fire: f, kind: 'ran' as Kind }))), ledger: [] as ConfigMapObject[] };
    const first = decideTrigger(trigger, facts, { history: 1, maxFailures: 1 }, NOW);
    expect(first.steps).toEqual([{ kind: 'record-deliveries', writes: [expect.objectContaining({ create: true, entries: { f0: expect.any(String), f1: expect.any(String) } })] }]);
    expect(first.children).toBeUndefined();
    const ledger = first.steps![0]!.writes.map((w) => ({ ...w.page, data: w.entries }));
    const second = decideTrigger(trigger, { ...facts, ledger }, { history: 1, maxFailures: 1 }, NOW);
    expect(second.steps).toBeUndefined();
    expect(second.children).toEqual([
      { type: TRIGGER_FIRE, plan: { create: [], update: [], delete: [fires[0], fires[1]] } },
      { type: DELIVERY_LEDGER, plan: { create: [], update: [], delete: [] } },
    ]);
    expect(second.requeueAfter).toBeLessThanOrEqual(5 * 60_000);
    const later = new Date(NOW.getTime() + 74 * 3600_000);
    const expired = decideTrigger(trigger, { fires: [], sessions: new Map(), ledger }, { history: 1 }, later);
    expect(expired.children?.[1]?.plan.delete.map((p) => p.metadata.name)).toEqual(['web-hook-deliveries-2030010111-0']);
  });

  it('a delivery older than 72 h is not recorded', () => {
    const old = fire(0, 'ran', { deliveryId: 'd-old', firedAt: '2029-12-01T00:00:00.000Z' });
    const facts = { fires: [old, delivered(1)], sessions: sessionsOf([{ fire: delivered(1), kind: 'ran' }]), ledger: [] };
    const outcome = decideTrigger(trigger, facts, { history: 1, maxFailures: 1 }, NOW);
    expect(outcome.steps).toBeUndefined();
    expect(outcome.children?.[0]?.plan.delete).toEqual([old]);
  });
});

describe('sessionsToPrune (SVC_SESSION_HISTORY)', () => {
  const project: Project = { apiVersion: 'svc.dev/v1alpha1', kind: 'Project', metadata: { name: 'web', namespace: 'acct', uid: 'p-uid' }, spec: { repoUrl: '/r', defaultBranch: 'main' } } as Project;
  /** Session `i` (a UUID, made at minute i: later = newer) in `state`: stopped, failed, running, or waking (stopped, asked to run again). */
  const session = (i: number, state: 'stopped' | 'failed' | 'running' | 'waking' | 'deleting'): Session => ({
    apiVersion: 'svc.dev/v1alpha1', kind: 'Session',
    metadata: { name: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, namespace: 'acct', creationTimestamp: at(i), ...(state === 'deleting' ? { deletionTimestamp: at(59) } : {}) },
    spec: { projectRef: { name: 'web' }, agent: 'a', baseRef: 'main', desiredState: state === 'running' || state === 'waking' ? 'running' : 'stopped' },
    status: { status: state === 'failed' ? 'failed' : state === 'running' ? 'running' : 'stopped' },
  });
  const id = (s: Session) => Number(s.metadata.name!.slice(-12));
  const openOn = (s: Session, status = 'open'): ChangeRequest => ({
    apiVersion: 'svc.dev/v1alpha1', kind: 'ChangeRequest', metadata: { name: `cr-${id(s)}`, namespace: 'acct' },
    spec: { projectRef: { name: 'web' }, number: id(s), headRef: s.metadata.name!, baseRef: 'main', title: 't' }, status: { status },
  } as ChangeRequest);
  /** The fire that started `s` (its spec and status name it, as a fired fire's do). */
  const firedBy = (s: Session): TriggerFire => {
    const made = fire(id(s), 'ran');
    return { ...made, spec: { ...made.spec, sessionName: s.metadata.name! }, status: { ...made.status!, sessionName: s.metadata.name! } };
  };
  const pruned = (sessions: Session[], history: number, extra: { fires?: TriggerFire[]; changeRequests?: ChangeRequest[]; project?: Project | undefined } = {}) =>
    sessionsToPrune({ sessions, project: 'project' in extra ? extra.project : project, changeRequests: extra.changeRequests ?? [] }, extra.fires ?? [], history).map(id);

  it('deletes finished sessions beyond the newest `history`, oldest first; 0 deletes none', () => {
    const all = [session(3, 'stopped'), session(1, 'failed'), session(5, 'stopped'), session(2, 'stopped'), session(4, 'failed')];
    expect(pruned(all, 2)).toEqual([1, 2, 3]);
    expect(pruned(all, 5)).toEqual([]);
    expect(pruned(all, 0)).toEqual([]);
  });

  it('never deletes a session that runs, is being woken or is already going, nor counts it', () => {
    const all = [session(1, 'stopped'), session(2, 'stopped'), session(3, 'running'), session(4, 'waking'), session(5, 'deleting'), session(6, 'stopped')];
    expect(pruned(all, 1)).toEqual([1, 2]);
  });

  it('keeps a session a kept fire names and one an open change request uses; a closed one does not keep it', () => {
    const all = [1, 2, 3, 4].map((i) => session(i, 'stopped'));
    expect(pruned(all, 1, { fires: [firedBy(all[0]!)], changeRequests: [openOn(all[1]!), openOn(all[2]!, 'closed')] })).toEqual([3]);
  });

  it('deletes nothing without the Project (its repository decides which branches stay)', () => {
    expect(pruned([1, 2, 3].map((i) => session(i, 'stopped')), 1, { project: undefined })).toEqual([]);
  });

  it('decideTrigger deletes them as Session children only when the facts carry them', () => {
    const all = [1, 2, 3].map((i) => session(i, 'failed'));
    const facts = { fires: [], sessions: new Map<string, Session>(), ledger: [] };
    const sessionPlan = (outcome: ReturnType<typeof decideTrigger>) => outcome.children?.find((c) => c.type === SESSION)?.plan.delete.map((s) => id(s as Session));
    expect(sessionPlan(decideTrigger(trigger, { ...facts, started: { sessions: all, project, changeRequests: [] } }, { history: 1, sessionHistory: 1 }, NOW))).toEqual([1, 2]);
    expect(sessionPlan(decideTrigger(trigger, facts, { history: 1, sessionHistory: 1 }, NOW))).toBeUndefined();
  });
});
