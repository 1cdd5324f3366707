import { chmodSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findExecutable, pinnedEngineBinary, resolveEngineCommand } from './engine-path.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'engine-path-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the pinned engine', () => {
  it('is the opencode-ai package binary of this checkout, not a PATH lookup', () => {
    const binary = pinnedEngineBinary();
    expect(binary && realpathSync(binary)).toBe(realpathSync('node_modules/opencode-ai/bin/opencode.exe'));
  });

  it('replaces a bare `opencode` only', () => {
    const pinned = () => '/pkg/opencode';
    expect(resolveEngineCommand(['opencode', 'serve', '--port', '1'], pinned)).toEqual(['/pkg/opencode', 'serve', '--port', '1']);
    expect(resolveEngineCommand(['/usr/local/bin/opencode', 'serve'], pinned)).toEqual(['/usr/local/bin/opencode', 'serve']);
    expect(resolveEngineCommand(['node', 'engine.js'], pinned)).toEqual(['node', 'engine.js']);
    // not installed (the sandbox image): PATH decides, as before
    expect(resolveEngineCommand(['opencode', 'serve'], () => null)).toEqual(['opencode', 'serve']);
  });
});

describe('findExecutable', () => {
  it('looks a name up on the given PATH and takes a name with a slash as a path', () => {
    const tool = path.join(dir, 'tool');
    writeFileSync(tool, '#!/bin/sh\n');
    chmodSync(tool, 0o755);
    const plain = path.join(dir, 'plain');
    writeFileSync(plain, 'not executable');
    expect(findExecutable('tool', `/nonexistent${path.delimiter}${dir}`)).toBe(tool);
    expect(findExecutable('tool', '/nonexistent')).toBeNull();
    expect(findExecutable('plain', dir)).toBeNull();
    expect(findExecutable(tool, '')).toBe(tool);
    expect(findExecutable(plain, '')).toBeNull();
  });
});
