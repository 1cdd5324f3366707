// The decide loop of the object reconciler over memory: observe, compute, perform the steps the
// outcome asks for, compute again with their facts; terminal errors from a step; a step that
// never settles.
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../resources/index.js';
import { createLogger } from '../lib/log.js';
import type { ReconcileContext } from './controller.js';
import { TerminalError } from './errors.js';
import { applyOutcome, decide, MAX_STEP_PASSES, writeStatusOverMetadataChanges, type ObjectReconciler, type OutcomeWriter } from './reconciler.js';
import { ConflictError, type CachedResource } from '../kube/index.js';

type Thing = KubeObject & { status?: { state?: string; reason?: string; conditions?: [] } };
interface Facts { pushed: boolean; secret: boolean }
type Step = 'push' | 'secret';

const thing: Thing = { apiVersion: 'v1', kind: 'Thing', metadata: { name: 't', namespace: 'ns', generation: 1 } };
const ctx = { signal: new AbortController().signal, log: createLogger(() => {}) } as unknown as ReconcileContext;
const NOW = new Date('2030-01-01T00:00:00Z');

function kind(perform: (step: Step) => Promise<Partial<Facts>>, performed: Step[]): ObjectReconciler<Thing, Facts, Step> {
  return {
    name: 'things',
    for: { group: '', version: 'v1', kind: 'Thing', plural: 'things', singular: 'thing', namespaced: true, shortNames: [] },
    observe: async () => ({ pushed: false, secret: false }),
    compute(_obj, facts) {
      // the secret only once the branch is there; the state says what the facts were
      const steps: Step[] = !facts.pushed ? ['push'] : !facts.secret ? ['secret'] : [];
      return { status: { state: `${facts.pushed}/${facts.secret}` }, steps, events: facts.secret ? [{ type: 'Normal', reason: 'Done', message: 'both' }] : [] };
    },
    async perform(_obj, step) {
      performed.push(step);
      return { observed: await perform(step) };
    },
  };
}

describe('decide', () => {
  it('performs the steps in passes and the final compute sees every fact', async () => {
    const performed: Step[] = [];
    const { outcome } = await decide(kind(async (step) => (step === 'push' ? { pushed: true } : { secret: true }), performed), thing, ctx, () => NOW);
    expect(performed).toEqual(['push', 'secret']);
    expect(outcome.status).toEqual({ state: 'true/true' });
    expect(outcome.steps).toEqual([]);
    expect(outcome.events).toEqual([{ type: 'Normal', reason: 'Done', message: 'both' }]);
  });

  it('a TerminalError from a step becomes the terminal outcome (Ready=False, a Warning)', async () => {
    const { outcome } = await decide(kind(async () => { throw new TerminalError('PushRejected', 'the host refused'); }, []), thing, ctx, () => NOW);
    expect(outcome.status).toMatchObject({ conditions: [{ type: 'Ready', status: 'False', reason: 'PushRejected', message: 'the host refused' }] });
    expect(outcome.events).toEqual([{ type: 'Warning', reason: 'PushRejected', message: 'the host refused' }]);
  });

  it('a step that changes no fact is an error after a few passes, not a loop', async () => {
    const performed: Step[] = [];
    await expect(decide(kind(async () => ({}), performed), thing, ctx, () => NOW)).rejects.toThrow(/did not settle/);
    expect(performed).toHaveLength(MAX_STEP_PASSES);
  });

  it('other errors retry (they leave decide)', async () => {
    await expect(decide(kind(async () => { throw new Error('network'); }, []), thing, ctx, () => NOW)).rejects.toThrow('network');
  });
});

describe('applyOutcome', () => {
  function memoryWriter() {
    const written: NonNullable<Thing['status']>[] = [];
    const writer: OutcomeWriter<Thing> = { writeStatus: async (_obj, status) => { written.push(status); }, recordEvent: async () => {}, applyChildren: async () => {} };
    return { written, writer };
  }

  it('writes the computed status whole: a field the controller left out is removed, not brought back from the stored status', async () => {
    const { written, writer } = memoryWriter();
    const stopped: Thing = { ...thing, status: { state: 'stopped', reason: 'Stopped' } };
    const { reason: _gone, ...woken } = { ...stopped.status, state: 'running' };
    expect(await applyOutcome(stopped, { status: woken }, writer)).toEqual({ statusWritten: true });
    expect(written).toEqual([{ state: 'running' }]);
  });

  it('writes nothing when the computed status is the stored one', async () => {
    const { written, writer } = memoryWriter();
    expect(await applyOutcome({ ...thing, status: { state: 'running' } }, { status: { state: 'running' } }, writer)).toEqual({ statusWritten: false });
    expect(written).toEqual([]);
  });
});

describe('writeStatusOverMetadataChanges', () => {
  /** A handle whose stored object is `stored`: a status write with another resourceVersion is a Conflict. */
  function handle(stored: Thing) {
    const writes: Thing[] = [];
    const h = {
      client: { get: async () => stored },
      async replaceStatus(obj: Thing) {
        if (obj.metadata.resourceVersion !== stored.metadata.resourceVersion) throw new ConflictError('write status');
        writes.push(obj);
        return obj;
      },
    } as unknown as CachedResource<Thing>;
    return { h, writes };
  }
  const read: Thing = { ...thing, metadata: { ...thing.metadata, resourceVersion: '1' }, status: { state: 'old' } };

  it('only metadata changed since the read (an annotation): written again on the new version', async () => {
    const { h, writes } = handle({ ...read, metadata: { ...read.metadata, resourceVersion: '2', annotations: { 'svc.dev/daemon-event': 'x ready' } } });
    await writeStatusOverMetadataChanges(h, read, { state: 'new' });
    expect(writes).toEqual([expect.objectContaining({ metadata: expect.objectContaining({ resourceVersion: '2' }), status: { state: 'new' } })]);
  });

  it.each([
    ['the spec changed (generation)', { ...read, metadata: { ...read.metadata, resourceVersion: '2', generation: 2 } }],
    ['someone else wrote the status', { ...read, metadata: { ...read.metadata, resourceVersion: '2' }, status: { state: 'theirs' } }],
  ])('%s: the Conflict goes back to the queue', async (_name, stored) => {
    const { h, writes } = handle(stored as Thing);
    await expect(writeStatusOverMetadataChanges(h, read, { state: 'new' })).rejects.toThrow(ConflictError);
    expect(writes).toEqual([]);
  });
});
