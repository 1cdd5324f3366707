import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { childrenMap, isRunning, parentPid, processTree, statFields } from './proc.js';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'svc-proc-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('/proc facts', () => {
  it('reads a process whose command holds spaces and parentheses: its parent, its place among its siblings, its tree, that it runs', async () => {
    // ") Z" in the command: a parser that stops at the wrong parenthesis reads a zombie
    const odd = path.join(tmp, 'x) Z 1 (y');
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
      expect(isRunning(first.pid!)).toBe(true);
    } finally {
      first.kill('SIGKILL');
      second.kill('SIGKILL');
    }
    await new Promise((r) => first.once('exit', r));
    expect(statFields(first.pid!)).toBeUndefined();
    expect(parentPid(first.pid!)).toBe(0);
    expect(isRunning(first.pid!)).toBe(false);
  });

  it('a zombie does not run: its parent never reaps it', async () => {
    // sh execs into sleep, which never waits for the child sh left behind
    const parent = spawn('sh', ['-c', 'sleep 0 & exec sleep 30'], { stdio: 'ignore' });
    try {
      const zombie = () => childrenMap().get(parent.pid!)?.find((pid) => statFields(pid)?.[0] === 'Z');
      await expect.poll(zombie).toBeDefined();
      expect(isRunning(zombie()!)).toBe(false);
      expect(isRunning(parent.pid!)).toBe(true);
    } finally {
      parent.kill('SIGKILL');
    }
  });
});
