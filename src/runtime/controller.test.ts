// A controller's external sources (a sandbox process that ended): their keys are reconciled
// while the controller runs, and nothing is heard after it stopped.
import { describe, expect, it } from 'vitest';
import { createLogger } from '../lib/log.js';
import { RunningController, type ObjectKey, type ReconcileContext } from './controller.js';

describe('RunningController sources', () => {
  it('enqueue keys while running; unsubscribed on stop', async () => {
    let emit: ((key: ObjectKey) => void) | null = null;
    const reconciled: string[] = [];
    const ctx = { informer: () => ({ on() {} }), log: createLogger(() => {}) } as unknown as ReconcileContext;
    const controller = new RunningController({
      name: 'things',
      for: { group: '', version: 'v1', kind: 'Thing', plural: 'things', singular: 'thing', namespaced: true, shortNames: [] },
      sources: [{ subscribe(enqueue) { emit = enqueue; return () => { emit = null; }; } }],
      async reconcile(key) { reconciled.push(`${key.namespace}/${key.name}`); },
    }, ctx, () => {});
    controller.start();
    emit!({ namespace: 'ns', name: 'a' });
    await controller.queue.idle();
    await new Promise((r) => setTimeout(r, 10));
    expect(reconciled).toEqual(['ns/a']);
    await controller.stop();
    expect(emit).toBeNull();
  });
});
