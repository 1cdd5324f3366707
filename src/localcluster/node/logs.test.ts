import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { text } from 'node:stream/consumers';
import { MAX_TAIL_BYTES, podDir, podLogReader } from './logs.js';

/** What the reader answered, as text (a whole run comes as a stream). */
async function answer(read: ReturnType<typeof podLogReader>, ...args: Parameters<ReturnType<typeof podLogReader>>): Promise<string | undefined> {
  const got = await read(...args);
  return got === undefined || typeof got === 'string' ? got : text(got);
}

const dirs: string[] = [];
afterEach(() => { for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true }); });

/** A data directory with the log directory of one pod's container `sandbox`. */
function podWithLogs() {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'node-logs-'));
  dirs.push(dataDir);
  const pod = { metadata: { name: 'p', uid: '0123456789ab-cdef-0000' }, spec: { containers: [{ name: 'sandbox' }] } };
  const logs = path.join(podDir(dataDir, pod.metadata.uid), 'logs', 'sandbox');
  mkdirSync(logs, { recursive: true });
  return { dataDir, pod, logs };
}

describe("the node simulator's pod logs (pods/log)", () => {
  it('reads the current or previous run of a container, its last lines when asked; nothing for a container that never ran', async () => {
    const { dataDir, pod, logs } = podWithLogs();
    writeFileSync(path.join(logs, '0.log'), 'first run\n');
    writeFileSync(path.join(logs, '1.log'), 'a\nb\nc\n');
    const read = podLogReader(dataDir);
    expect(await answer(read, pod, {})).toBe('a\nb\nc\n');
    expect(await answer(read, pod, { tailLines: 2 })).toBe('b\nc\n');
    expect(await answer(read, pod, { tailLines: 10 })).toBe('a\nb\nc\n');
    expect(await answer(read, pod, { previous: true })).toBe('first run\n');
    expect(await answer(read, pod, { container: 'other' })).toBeUndefined();
    expect(await answer(read, { ...pod, metadata: { name: 'q', uid: 'ffffffffffff' } }, {})).toBeUndefined();
  });

  it('reads the last lines from the end of a large log, at most MAX_TAIL_BYTES of them; the whole log as a stream', async () => {
    // a sandbox writes what it likes: 400 MB were read whole (and split) for ten lines
    const { dataDir, pod, logs } = podWithLogs();
    const lines = Array.from({ length: 100_000 }, (_, i) => `line ${i} ${'x'.repeat(i % 300)}`);
    writeFileSync(path.join(logs, '0.log'), `${lines.join('\n')}\nno newline yet`);
    const read = podLogReader(dataDir);
    expect(await read(pod, { tailLines: 3 })).toBe(`${lines.at(-2)}\n${lines.at(-1)}\nno newline yet\n`);
    expect(await read(pod, { tailLines: 1000 })).toBe([...lines.slice(-999), 'no newline yet'].map((l) => `${l}\n`).join(''));
    const many = (await read(pod, { tailLines: 1_000_000 })) as string;
    expect(Buffer.byteLength(many)).toBeLessThanOrEqual(MAX_TAIL_BYTES + 1);
    expect(many.endsWith('no newline yet\n')).toBe(true);
    expect(many.startsWith('line ')).toBe(true); // whole lines only
    // one line longer than the bound: its last MAX_TAIL_BYTES
    writeFileSync(path.join(logs, '1.log'), 'z'.repeat(MAX_TAIL_BYTES + 10));
    expect(await read(pod, { tailLines: 1 })).toBe(`${'z'.repeat(MAX_TAIL_BYTES)}\n`);
    const whole = await read(pod, { previous: true });
    expect(typeof whole).not.toBe('string');
    expect(await answer(read, pod, { previous: true })).toBe(`${lines.join('\n')}\nno newline yet`);
  });
});
