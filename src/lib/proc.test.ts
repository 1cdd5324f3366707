import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { childrenMap, parentPid, processTree, statFields } from './proc.js';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'svc-proc-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('/proc facts', () => {
  it('reads a process whose command holds spaces and parentheses: its parent, its place among its siblings, its tree', async () => {
    const odd = path.join(tmp, 'x) 1 (y');
    symlinkSync('/bin/sleep', odd);
    const first = spawn(odd, ['30'], { stdio: 'ignore' });
    await new Promise((r) => setTimeout(r, 20));
    const second = spawn('/bin/sleep', ['30'], { stdio: 'ignore' });
    try {
      await expect.poll(() => statFields(first.pid!)?.[0]).toMatch(/^[RS]$/);
      expect(parentPid(first.pid!)).toBe(process.pid);
      expect(parentPid(second.pid!)).toBe(process.pid);
      const mine = childrenMap().get(process.pid)!;
      expect(mine.indexOf(first.pid!)).toBeLessThan(mine.indexOf(second.pid!));
      expect(processTree(process.pid)).toEqual(expect.arrayContaining([process.pid, first.pid, second.pid]));
    } finally {
      first.kill('SIGKILL');
      second.kill('SIGKILL');
    }
    await new Promise((r) => first.once('exit', r));
    expect(statFields(first.pid!)).toBeUndefined();
    expect(parentPid(first.pid!)).toBe(0);
  });
});
