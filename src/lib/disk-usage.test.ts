import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { diskUsage, diskUsages } from './disk-usage.js';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'svc-du-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const MiB = 2 ** 20;
function folder(name: string, bytes: number): string {
  const dir = path.join(tmp, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'data.bin'), Buffer.alloc(bytes, 1));
  return dir;
}

describe('diskUsages', () => {
  it('each group its own sum, in one du for all; a group of missing folders is undefined', async () => {
    const a1 = folder('a/workspace', 1 * MiB);
    const a2 = folder('a/home', 2 * MiB);
    const b = folder('b/workspace', 3 * MiB);
    // a du that says it ran, in front of the real one
    const bin = path.join(tmp, 'bin');
    mkdirSync(bin);
    const calls = path.join(tmp, 'du-calls');
    writeFileSync(path.join(bin, 'du'), `#!/bin/sh\necho "$@" >> ${calls}\nexec /usr/bin/du "$@"\n`);
    chmodSync(path.join(bin, 'du'), 0o755);
    const saved = process.env.PATH;
    process.env.PATH = `${bin}:${saved}`;
    try {
      const [a, bUsed, none] = await diskUsages([[a1, a2], [b, path.join(tmp, 'b/home')], [path.join(tmp, 'c/workspace')]]);
      expect(a).toBeGreaterThanOrEqual(3 * MiB);
      expect(a).toBeLessThan(3 * MiB + 64 * 1024);
      expect(bUsed).toBeGreaterThanOrEqual(3 * MiB);
      expect(bUsed).toBeLessThan(3 * MiB + 64 * 1024);
      expect(none).toBeUndefined();
      expect(readFileSync(calls, 'utf8').trim().split('\n')).toHaveLength(1);
    } finally {
      process.env.PATH = saved;
    }
  });

  it('nothing to measure: no du at all (du without a folder measures the working directory)', async () => {
    expect(await diskUsages([])).toEqual([]);
    expect(await diskUsages([[path.join(tmp, 'nowhere')]])).toEqual([undefined]);
    expect(await diskUsage([path.join(tmp, 'nowhere')])).toBeUndefined();
  });
});
