// The lock on a filesystem without hard links (link(2) fails with EPERM, as on some shared
// folders): taken by an exclusive create instead, with the same refusal.
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import type * as fs from 'node:fs';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DataDirInUseError, lockDataDir } from './data-dir-lock.js';

vi.mock('node:fs', async (original) => ({
  ...await original<typeof fs>(),
  linkSync: () => { throw Object.assign(new Error('EPERM: operation not permitted, link'), { code: 'EPERM' }); },
}));

let dir: string;
beforeEach(() => { dir = mkdtempSync(path.join(os.tmpdir(), 'svc-lock-nolinks-')); });
afterEach(() => rmSync(dir, { recursive: true, force: true }));

it('takes the directory, refuses a second holder while held, and gives it back', () => {
  const unlock = lockDataDir(dir);
  expect(() => lockDataDir(dir)).toThrow(DataDirInUseError);
  unlock();
  expect(readdirSync(dir)).toEqual([]);
  lockDataDir(dir)();
});
