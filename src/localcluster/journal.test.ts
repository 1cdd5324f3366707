import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { Journal } from './journal.js';

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

it('replays appended records, ignores (and cuts) a torn last line, and resolves appends only when durable', async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'svc-journal-'));
  const durable: number[] = [];
  const j = Journal.open(dir, 0, (recs) => durable.push(...recs.map((r) => r.rv)), () => ({ rv: 0, objects: new Map() }));
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
