import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { Journal } from './journal.js';

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

it('replays appended records, ignores (and cuts) a torn last line, and resolves appends only when durable', async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'svc-journal-'));
  const durable: number[] = [];
  const j = Journal.open(dir, { records: 0, bytes: 0 }, (recs) => durable.push(...recs.map((r) => r.rv)), () => ({ rv: 0, objects: new Map() }));
  const writes = [1, 2, 3].map((rv) => j.append({ rv, k: `g/p/ns/o${rv}`, obj: { metadata: { name: `o${rv}` } } }));
  writes.push(j.append({ rv: 4, k: 'g/p/ns/o1' }));
  await Promise.all(writes);
  expect(durable).toEqual([1, 2, 3, 4]);
  await j.close();
  appendFileSync(path.join(dir, 'journal.ndjson'), '{"rv":5,"k":"g/p/ns/o5","obj":{"meta');
  const { state } = Journal.load(dir);
  expect(state.rv).toBe(4);
  expect([...state.objects.keys()]).toEqual(['g/p/ns/o2', 'g/p/ns/o3']);
  expect(readFileSync(path.join(dir, 'journal.ndjson'), 'utf8').endsWith('}\n')).toBe(true);
});

/** A journal kept like the cluster keeps it: the state changed in memory, then the record appended. */
function journaled(compactAfterRecords: number, onCompaction: () => void) {
  const objects = new Map<string, { metadata: { name: string; rv: number } }>();
  let rv = 0;
  const state = () => {
    onCompaction();
    return { rv, objects: new Map(objects) };
  };
  const journal = Journal.open(dir, { records: 0, bytes: 0 }, () => undefined, state, { records: compactAfterRecords });
  const set = (name: string) => {
    rv++;
    const obj = { metadata: { name, rv } };
    objects.set(`g/p/ns/${name}`, obj);
    return journal.append({ rv, k: `g/p/ns/${name}`, obj });
  };
  const remove = (name: string) => {
    rv++;
    objects.delete(`g/p/ns/${name}`);
    return journal.append({ rv, k: `g/p/ns/${name}` });
  };
  return { journal, objects, set, remove, rv: () => rv };
}

it('compacts in the background: records written meanwhile go to a new journal, and everything loads back', async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'svc-journal-'));
  let during: Promise<void>[] = [];
  let setAside = false;
  const j = journaled(2500, () => {
    // right after the journal is set aside, while the snapshot is being written
    queueMicrotask(() => {
      setAside = existsSync(path.join(dir, 'journal.prev.ndjson'));
      during = [j.set('new-1'), j.remove('o5'), j.set('o6')];
    });
  });
  // 3,000 objects: the snapshot is written over several turns of the event loop
  for (let batch = 0; batch < 3; batch++) await Promise.all(Array.from({ length: 1000 }, (_, i) => j.set(`o${batch * 1000 + i}`)));
  await j.journal.idle();
  await Promise.all(during);
  expect(setAside).toBe(true);
  expect(during).toHaveLength(3);
  await j.journal.close();
  expect(existsSync(path.join(dir, 'journal.prev.ndjson'))).toBe(false);
  expect(existsSync(path.join(dir, 'snapshot.json.next'))).toBe(false);
  // the snapshot holds the state as of the set-aside, the new journal what came after
  const snapshot = JSON.parse(readFileSync(path.join(dir, 'snapshot.json'), 'utf8')) as { rv: number; objects: [string, unknown][] };
  expect(snapshot.objects.length).toBeGreaterThanOrEqual(3000);
  expect(readFileSync(path.join(dir, 'journal.ndjson'), 'utf8').trim().split('\n').length).toBeLessThan(1000);
  const { state } = Journal.load(dir);
  expect(state.rv).toBe(j.rv());
  expect(new Map(state.objects)).toEqual(j.objects);
});

it('a compaction cut off by a crash loses nothing: the old snapshot and both journals load, and opening folds them', async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'svc-journal-'));
  writeFileSync(path.join(dir, 'snapshot.json'), JSON.stringify({ rv: 2, objects: [['g/p/ns/a', { v: 1 }], ['g/p/ns/b', { v: 2 }]] }));
  writeFileSync(path.join(dir, 'journal.prev.ndjson'), [{ rv: 2, k: 'g/p/ns/b', obj: { v: 2 } }, { rv: 3, k: 'g/p/ns/c', obj: { v: 3 } }, { rv: 4, k: 'g/p/ns/a' }].map((r) => `${JSON.stringify(r)}\n`).join(''));
  writeFileSync(path.join(dir, 'journal.ndjson'), `${JSON.stringify({ rv: 5, k: 'g/p/ns/d', obj: { v: 5 } })}\n`);
  writeFileSync(path.join(dir, 'snapshot.json.next'), '{"rv":4,"objects":[["g/p/ns/b",{"v"'); // torn
  const { state, journal } = Journal.load(dir);
  expect(state.rv).toBe(5);
  expect(Object.fromEntries(state.objects)).toEqual({ 'g/p/ns/b': { v: 2 }, 'g/p/ns/c': { v: 3 }, 'g/p/ns/d': { v: 5 } });
  const j = Journal.open(dir, journal, () => undefined, () => state);
  expect(existsSync(path.join(dir, 'journal.prev.ndjson'))).toBe(false);
  expect(readFileSync(path.join(dir, 'journal.ndjson'), 'utf8')).toBe('');
  await j.append({ rv: 6, k: 'g/p/ns/c' });
  await j.close();
  expect(Object.fromEntries(Journal.load(dir).state.objects)).toEqual({ 'g/p/ns/b': { v: 2 }, 'g/p/ns/d': { v: 5 } });
});

it('folds the journal into the snapshot after so many bytes, whatever the count: large objects written again and again', async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'svc-journal-'));
  const objects = new Map<string, { metadata: { name: string }; data: string }>();
  let compactions = 0;
  const j = Journal.open(dir, { records: 0, bytes: 0 }, () => undefined, () => { compactions++; return { rv, objects: new Map(objects) }; }, { bytes: 1024 * 1024 });
  let rv = 0;
  for (let i = 0; i < 40; i++) {
    rv++;
    const obj = { metadata: { name: 'big' }, data: `${i}`.padEnd(200 * 1024, 'x') };
    objects.set('g/p/ns/big', obj);
    await j.append({ rv, k: 'g/p/ns/big', obj });
  }
  await j.close();
  // 40 records of 200 KB: 8 MB of journal at the old count (20,000) threshold
  expect(compactions).toBeGreaterThanOrEqual(5);
  expect(readFileSync(path.join(dir, 'journal.ndjson')).length).toBeLessThan(1024 * 1024 + 210 * 1024);
  const loaded = Journal.load(dir);
  expect(loaded.state.rv).toBe(40);
  expect((loaded.state.objects.get('g/p/ns/big') as { data: string }).data.startsWith('39x')).toBe(true);
});

it('reads the journal and the snapshot a line at a time: a line longer than a read, and a snapshot written whole by an older version', () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'svc-journal-'));
  const long = 'y'.repeat(5 * 1024 * 1024); // longer than one read (4 MiB)
  writeFileSync(path.join(dir, 'snapshot.json'), JSON.stringify({ rv: 2, objects: [['g/p/ns/a', { v: 1 }], ['g/p/ns/b', { v: 2 }]] }));
  writeFileSync(path.join(dir, 'journal.ndjson'), [{ rv: 3, k: 'g/p/ns/long', obj: { v: long } }, { rv: 4, k: 'g/p/ns/a' }].map((r) => `${JSON.stringify(r)}\n`).join(''));
  const { state, journal } = Journal.load(dir);
  expect(state.rv).toBe(4);
  expect(journal.records).toBe(2);
  expect(journal.bytes).toBe(readFileSync(path.join(dir, 'journal.ndjson')).length);
  expect([...state.objects.keys()]).toEqual(['g/p/ns/b', 'g/p/ns/long']);
  expect((state.objects.get('g/p/ns/long') as { v: string }).v).toBe(long);
  // written again in lines, it loads back the same
  const j = Journal.open(dir, journal, () => undefined, () => state);
  j.compact();
  const text = readFileSync(path.join(dir, 'snapshot.json'), 'utf8');
  expect(text.split('\n')).toHaveLength(4);
  expect(JSON.parse(text)).toEqual({ rv: 4, objects: [...state.objects] });
  expect(Journal.load(dir).state).toEqual(state);
  return j.close();
});
