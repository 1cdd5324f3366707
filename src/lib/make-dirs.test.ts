import { closeSync, mkdtempSync, openSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { makeDirs } from './make-dirs.js';

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

it('makes a directory and its missing parents with the mode given, and leaves existing ones', () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'svc-make-dirs-'));
  makeDirs(path.join(dir, 'a/b/c'), 0o700);
  expect(statSync(path.join(dir, 'a/b/c')).mode & 0o777).toBe(0o700);
  expect(statSync(path.join(dir, 'a')).mode & 0o777).toBe(0o700);
  makeDirs(path.join(dir, 'a/b/c'));
});

it('throws, rather than spinning as recursive mkdirSync does, below a directory deleted while in use', () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'svc-make-dirs-'));
  const gone = path.join(dir, 'gone');
  makeDirs(gone);
  const fd = openSync(gone, 'r');
  try {
    rmSync(gone, { recursive: true });
    // the deleted directory, still open: as a sandbox's home looks from inside once its folder is removed
    expect(statSync(`/proc/self/fd/${fd}`).isDirectory()).toBe(true);
    expect(() => makeDirs(`/proc/self/fd/${fd}/x/y`)).toThrow(/ENOENT/);
  } finally {
    closeSync(fd);
  }
});
