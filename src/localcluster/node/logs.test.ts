import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { podDir, podLogReader } from './logs.js';

const dirs: string[] = [];
afterEach(() => { for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true }); });

describe("the node simulator's pod logs (pods/log)", () => {
  it('reads the current or previous run of a container, its last lines when asked; nothing for a container that never ran', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'node-logs-'));
    dirs.push(dataDir);
    const pod = { metadata: { name: 'p', uid: '0123456789ab-cdef-0000' }, spec: { containers: [{ name: 'sandbox' }] } };
    const logs = path.join(podDir(dataDir, pod.metadata.uid), 'logs', 'sandbox');
    mkdirSync(logs, { recursive: true });
    writeFileSync(path.join(logs, '0.log'), 'first run\n');
    writeFileSync(path.join(logs, '1.log'), 'a\nb\nc\n');
    const read = podLogReader(dataDir);
    expect(await read(pod, {})).toBe('a\nb\nc\n');
    expect(await read(pod, { tailLines: 2 })).toBe('b\nc\n');
    expect(await read(pod, { previous: true })).toBe('first run\n');
    expect(await read(pod, { container: 'other' })).toBeUndefined();
    expect(await read({ ...pod, metadata: { name: 'q', uid: 'ffffffffffff' } }, {})).toBeUndefined();
  });
});
