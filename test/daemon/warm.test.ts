// A warm svc-agent (docs/sandboxes.md "Warm sandboxes"): loaded before its session, its settings
// then come on stdin, after which it is what a svc-agent started with them is, /proc included.
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { DaemonPool, SESSION_ID, TOKEN, buildArtifacts, signed } from './harness.js';
import { readWarmSettings } from '../../daemon/warm.js';
import { environBytes, fitsWarm, warmEnvironment } from '../../src/lib/warm-sandbox.js';

const pool = new DaemonPool();
afterEach(() => pool.stopAll());
afterAll(() => pool.cleanup());

const environ = (pid: number) => readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');

describe('a warm svc-agent', () => {
  it('takes its settings from stdin: its environment, its /proc environ and its engine\'s are a started one\'s', async () => {
    const secret = "it's \"quoted\" $HOME\nline two, ünïcode";
    const d = await pool.start(pool.scratch(), { PROJECT_SECRET: secret, SVC_PROJECT_SECRET_NAMES: 'PROJECT_SECRET' }, { warm: true });
    await d.waitFor((h) => h.engine.state === 'ready', 'engine ready');
    const shown = environ(d.process.pid!);
    expect(shown).toContain(`SVC_SESSION_ID=${SESSION_ID}`);
    expect(shown).toContain(`SVC_SANDBOX_TOKEN=${TOKEN}`);
    expect(shown).toContain(`PROJECT_SECRET=${secret}`);
    // nothing of the waiting is left but one entry holding the unused room
    expect(shown.filter((e) => e.startsWith('SVC_AGENT_SETTINGS='))).toEqual([]);
    expect(shown.filter((e) => e.startsWith('SVC_ENV_RESERVE'))).toHaveLength(1);
    expect(shown.filter((e) => e.startsWith('SVC_ENV_RESERVE_'))).toEqual([]);
    expect(d.output()).not.toContain('keeps the warm sandbox');
    // what its engine inherited (process.env, not the block)
    const engineEnv = (await (await fetch(`${d.url}/fixture/env`, signed())).json()) as Record<string, string>;
    expect(engineEnv.PROJECT_SECRET).toBe(secret);
    expect(engineEnv.SVC_SESSION_ID).toBe(SESSION_ID);
    expect(Object.keys(engineEnv).filter((name) => name.startsWith('SVC_ENV_RESERVE') || name === 'SVC_AGENT_SETTINGS')).toEqual([]);
  }, 30_000);

  it('ends starting nothing when its stdin closes empty (the operator went away)', async () => {
    const { daemon } = await buildArtifacts();
    const child = spawn(process.execPath, [daemon], { env: warmEnvironment({ PATH: process.env.PATH! }), stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => { output += c.toString(); });
    child.stderr.on('data', (c: Buffer) => { output += c.toString(); });
    child.stdin.end();
    expect(await new Promise((resolve) => child.once('exit', resolve))).toBe(0);
    expect(output).toBe('');
  }, 15_000);

  it('refuses settings that are not an object of strings', async () => {
    await expect(readWarmSettings(Readable.from([Buffer.from('["x"]')]))).rejects.toThrow('not an object');
    await expect(readWarmSettings(Readable.from([Buffer.from('{"A=B":"x"}')]))).rejects.toThrow('bad entry "A=B"');
    await expect(readWarmSettings(Readable.from([Buffer.from('{"A":1}')]))).rejects.toThrow('bad entry "A"');
    await expect(readWarmSettings(Readable.from([Buffer.from('{"A":"x\\u0000y"}')]))).rejects.toThrow('bad entry "A"');
    expect(await readWarmSettings(Readable.from([Buffer.from('{"A":"x",'), Buffer.from('"B":"y"}')]))).toEqual({ A: 'x', B: 'y' });
  });

  it('fits a session whose environment the kept room holds, and no other (that one starts cold)', () => {
    const base = { PATH: '/usr/bin:/bin', HOME: '/opt/svc/home' };
    const room = environBytes(warmEnvironment(base));
    expect(fitsWarm(base, { ...base, SVC_SESSION_ID: SESSION_ID, SVC_INITIAL_PROMPT: 'x'.repeat(128 * 1024 - 30) })).toBe(true);
    const large = Object.fromEntries(Array.from({ length: 4 }, (_, i) => [`SECRET_${i}`, 'x'.repeat(100 * 1024)]));
    expect(environBytes({ ...base, ...large })).toBeGreaterThan(room);
    expect(fitsWarm(base, { ...base, ...large })).toBe(false);
  });
});
