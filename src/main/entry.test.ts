import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { compositionRoot } from './entry.js';

/** A folder with the given files, each with its modification time (seconds). */
function folder(files: Record<string, number>): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-entry-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  for (const [name, mtime] of Object.entries(files)) {
    writeFileSync(path.join(dir, name), '');
    utimesSync(path.join(dir, name), mtime, mtime);
  }
  return dir;
}

describe('compositionRoot', () => {
  it.each([
    ['the bundle, newer than the tsc output', { 'api-root.js': 100, 'api.bundle.mjs': 200 }, 'api.bundle.mjs'],
    ['the bundle, as new as the tsc output', { 'api-root.js': 100, 'api.bundle.mjs': 100 }, 'api.bundle.mjs'],
    ['the tsc output, newer than the bundle (tsc ran since the last bundle)', { 'api-root.js': 200, 'api.bundle.mjs': 100 }, 'api-root.js'],
    ['the tsc output, no bundle', { 'api-root.js': 100 }, 'api-root.js'],
  ])('runs %s', (_what, files, expected) => {
    const dir = folder(files);
    expect(compositionRoot(pathToFileURL(path.join(dir, 'api.js')).href, 'api').pathname).toBe(path.join(dir, expected));
  });

  it('runs the sources from a .ts entry (tsx), the bundle of its role only', () => {
    const dir = folder({ 'operator-root.ts': 100, 'api.bundle.mjs': 200 });
    expect(compositionRoot(pathToFileURL(path.join(dir, 'operator.ts')).href, 'operator').pathname).toBe(path.join(dir, 'operator-root.ts'));
  });
});
