import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { devPreflightChecks, PreflightError, runPreflight } from './preflight.js';

const bin = mkdtempSync(path.join(os.tmpdir(), 'preflight-'));
const empty = mkdtempSync(path.join(os.tmpdir(), 'preflight-empty-'));
afterAll(() => { rmSync(bin, { recursive: true, force: true }); rmSync(empty, { recursive: true, force: true }); });
for (const name of ['git', 'my-engine']) {
  writeFileSync(path.join(bin, name), '#!/bin/sh\n');
  chmodSync(path.join(bin, name), 0o755);
}

/** This machine's isolation answered as given (the real check needs root and the jail's programs). */
const isolated = async () => ({ ok: true, problems: [] });
const notIsolated = async () => ({ ok: false, problems: ['bwrap is missing: install it with `apt-get install bubblewrap`', 'nft is missing: install it with `apt-get install nftables`'] });

async function problems(options: Parameters<typeof devPreflightChecks>[0]): Promise<string[]> {
  try {
    await runPreflight(devPreflightChecks({ isolation: isolated, ...options }));
    return [];
  } catch (error) {
    if (error instanceof PreflightError) return error.problems;
    throw error;
  }
}

describe('svc dev preflight', () => {
  it('passes with git on PATH and the pinned engine installed', async () => {
    expect(await problems({ searchPath: bin, pinnedEngine: () => '/pkg/opencode' })).toEqual([]);
  });

  it('names every missing piece on its own line with how to get it', async () => {
    const found = await problems({ searchPath: empty, pinnedEngine: () => null });
    expect(found).toHaveLength(2);
    expect(found[0]).toMatch(/^git: not found on PATH; install it \(Debian\/Ubuntu: apt-get install git/);
    expect(found[1]).toMatch(/^the engine: opencode is not installed .*opencode-ai.*; run `make install`/);
    const error = await runPreflight(devPreflightChecks({ searchPath: empty, pinnedEngine: () => null, isolation: isolated })).catch((e: Error) => e);
    expect((error as Error).message.split('\n')).toEqual(['this machine lacks what svc dev needs:', `  - ${found[0]}`, `  - ${found[1]}`]);
  });

  it('the isolation tools: listed with the rest when svc dev cannot start, one line each; alone they do not stop it (it says so once running); not asked with --unsafe-no-isolation', async () => {
    const found = await problems({ searchPath: empty, pinnedEngine: () => null, isolation: notIsolated });
    expect(found).toHaveLength(4);
    expect(found.slice(2)).toEqual([
      'sandbox isolation: bwrap is missing: install it with `apt-get install bubblewrap` (without it sessions refuse to start; --unsafe-no-isolation runs them unisolated, which is unsafe)',
      'sandbox isolation: nft is missing: install it with `apt-get install nftables` (without it sessions refuse to start; --unsafe-no-isolation runs them unisolated, which is unsafe)',
    ]);
    expect(await problems({ searchPath: bin, pinnedEngine: () => '/pkg/opencode', isolation: notIsolated })).toEqual([]);
    let asked = false;
    const ask = async () => { asked = true; return notIsolated(); };
    expect(await problems({ searchPath: empty, pinnedEngine: () => null, isolation: ask, unsafeNoIsolation: true })).toHaveLength(2);
    expect(asked).toBe(false);
  });

  it('an opencode on PATH does for the engine when the package is not installed (the sandbox image)', async () => {
    writeFileSync(path.join(bin, 'opencode'), '#!/bin/sh\n');
    chmodSync(path.join(bin, 'opencode'), 0o755);
    try {
      expect(await problems({ searchPath: bin, pinnedEngine: () => null })).toEqual([]);
    } finally {
      rmSync(path.join(bin, 'opencode'));
    }
  });

  it('checks the program of --engine-command', async () => {
    expect(await problems({ searchPath: bin, engineCommand: "my-engine --port '{port}'" })).toEqual([]);
    expect(await problems({ searchPath: bin, engineCommand: `${path.join(bin, 'my-engine')} --port {port}` })).toEqual([]);
    expect(await problems({ searchPath: bin, engineCommand: 'no-such-engine --port {port}' }))
      .toEqual(['the engine: "no-such-engine" of --engine-command is not on PATH; install it or fix --engine-command']);
    expect(await problems({ searchPath: bin, engineCommand: '/nope/engine' }))
      .toEqual(['the engine: "/nope/engine" of --engine-command is not an executable file; install it or fix --engine-command']);
    expect((await problems({ searchPath: bin, engineCommand: "engine 'unclosed" }))[0]).toMatch(/cannot be split into words \(unterminated single quote\)/);
  });
});
