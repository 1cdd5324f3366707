// svc-agent as a process: configuration errors, engine boot and supervision (restart with
// backoff, giving up), a daemon restart that must not send the initial prompt again, and an
// initial prompt the engine did not take (it died taking it, or refused it) that is not lost.
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  DaemonPool, PROJECT_ID, SESSION_ID, TOKEN, buildArtifacts, readCalls, signed,
} from './harness.js';

const pool = new DaemonPool();
const scratch = () => pool.scratch();
const start = (...args: Parameters<DaemonPool['start']>) => pool.start(...args);

afterEach(() => pool.stopAll());
afterAll(() => pool.cleanup());

async function runToExit(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const { daemon } = await buildArtifacts();
  const child = spawn(process.execPath, [daemon], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  return { code, stderr };
}

describe('configuration', () => {
  it('a missing required variable is exit code 2 with a message naming it', async () => {
    const r = await runToExit({ SVC_PROJECT_ID: PROJECT_ID, SVC_SANDBOX_TOKEN: TOKEN });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('missing required environment: SVC_SESSION_ID');
  });

  it.each([
    [{ SVC_ENGINE_COMMAND: 'opencode "serve' }, 'SVC_ENGINE_COMMAND: unterminated double quote'],
    [{ SVC_SERVICE_PORT: '80000' }, 'SVC_SERVICE_PORT must be a port number'],
    [{ SVC_WORKSPACE: 'relative/dir' }, 'SVC_WORKSPACE must be an absolute path'],
    [{ SVC_PROJECT_AUTO_CLONE: '1' }, 'SVC_PROJECT_AUTO_CLONE=1 needs SVC_REPO_URL'],
    [{ SVC_PROJECT_AUTO_CLONE: '1', SVC_REPO_URL: 'https://git.example/r.git' }, 'needs SVC_API_URL'],
  ])('a bad value is exit code 2: %j', async (env, message) => {
    const r = await runToExit({ SVC_PROJECT_ID: PROJECT_ID, SVC_SESSION_ID: SESSION_ID, SVC_SANDBOX_TOKEN: TOKEN, ...env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
  });
});

describe('a sandbox folder removed under a booting svc-agent', () => {
  it('exits saying why, where recursive mkdirSync spun at full speed for good (an orphan in CI)', async () => {
    const { daemon } = await buildArtifacts();
    const { workspace, home } = scratch();
    const fd = openSync(home, 'r');
    rmSync(home, { recursive: true, force: true });
    // fd 3 of svc-agent: its engine home, deleted while open (as a bind mount of a removed folder looks)
    const child = spawn(process.execPath, [daemon], {
      env: { PATH: process.env.PATH, SVC_PROJECT_ID: PROJECT_ID, SVC_SESSION_ID: SESSION_ID, SVC_SANDBOX_TOKEN: TOKEN, SVC_SERVICE_PORT: '0', SVC_WORKSPACE: workspace, SVC_ENGINE_HOME: '/proc/self/fd/3' },
      stdio: ['ignore', 'pipe', 'pipe', fd],
    });
    closeSync(fd);
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => { stderr += d.toString(); });
    const spinning = setTimeout(() => child.kill('SIGKILL'), 20_000); // as it did: never left behind
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    clearTimeout(spinning);
    expect(code).toBe(1);
    expect(stderr).toMatch(/svc-agent: ENOENT.*\.svc-agent/);
  });
});

describe('engine supervision', () => {
  it('health moves from booting to ready; engine paths are 503 while booting', async () => {
    const d = await start(scratch(), { FIXTURE_ENGINE_LISTEN_DELAY_MS: '1500' });
    const first = await d.health();
    expect(first.engine.state).toBe('booting');
    expect(first.status).toBe('starting');
    const res = await fetch(`${d.url}/global/health`, signed());
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ error: 'engine is booting', engine_state: 'booting' });
    // the readiness form of health (a Pod's readiness probe) is 503 until the engine is ready
    expect((await fetch(`${d.url}/svc/health?ready=1`)).status).toBe(503);
    const ready = await d.waitFor((h) => h.engine.state === 'ready', 'engine ready');
    expect(ready.status).toBe('ok');
    expect((await fetch(`${d.url}/global/health`, signed())).status).toBe(200);
    expect((await fetch(`${d.url}/svc/health?ready=1`)).status).toBe(200);
  });

  it('a probe the engine accepted but never answers is given up and asked again, well within the boot timeout', async () => {
    // with a probe waiting 2 s for its answer this engine would be killed as not ready after 1.5 s
    const d = await start(scratch(), { FIXTURE_ENGINE_DROP_FIRST_REQUESTS: '1', SVC_ENGINE_BOOT_TIMEOUT_MS: '1500' });
    const ready = await d.waitFor((h) => h.engine.state === 'ready' || h.engine.last_error !== null, 'engine ready or failed');
    expect(ready.engine.last_error).toBeNull();
    expect(ready.engine.state).toBe('ready');
    expect(ready.engine.restarts).toBe(0);
  });

  it('a killed engine is restarted', async () => {
    const d = await start(scratch());
    await d.waitFor((h) => h.engine.state === 'ready', 'engine ready');
    const before = (await (await fetch(`${d.url}/global/health`, signed())).json()) as { pid: number };
    process.kill(before.pid, 'SIGKILL');
    const after = await d.waitFor((h) => h.engine.state === 'ready' && h.engine.restarts === 1, 'engine restarted');
    expect(after.engine.last_exit).toMatchObject({ code: null, signal: 'SIGKILL' });
    const again = (await (await fetch(`${d.url}/global/health`, signed())).json()) as { pid: number };
    expect(again.pid).not.toBe(before.pid);
  });

  it('an engine that keeps exiting is given up after N restarts; health is still served', async () => {
    const d = await start(scratch(), {
      SVC_ENGINE_COMMAND: `'${process.execPath}' -e 'process.exit(3)'`,
      SVC_ENGINE_MAX_RESTARTS: '2',
      SVC_ENGINE_RESTART_BACKOFF_MS: '20',
    });
    const failed = await d.waitFor((h) => h.engine.state === 'failed', 'engine failed');
    expect(failed.status).toBe('failed');
    expect(failed.engine.restarts).toBe(2);
    expect(failed.engine.last_exit).toMatchObject({ code: 3, signal: null });
    expect(failed.engine.last_error).toContain('giving up');
    const res = await fetch(`${d.url}/global/health`, signed());
    expect(res.status).toBe(503);
  });

  it('restarts back off exponentially, and health says when the next start is', async () => {
    const s = pool.scratch('log');
    const starts = path.join(s.log, 'starts');
    const d = await start(s, {
      SVC_ENGINE_COMMAND: `'${process.execPath}' -e 'require("fs").appendFileSync(process.argv[1], Date.now() + "\\n"); process.exit(3)' '${starts}'`,
      SVC_ENGINE_MAX_RESTARTS: '3',
      SVC_ENGINE_RESTART_BACKOFF_MS: '200',
    });
    const restarting = await d.waitFor((h) => h.engine.state === 'restarting' && h.engine.next_restart_at !== null, 'a scheduled restart');
    expect(Date.parse(restarting.engine.next_restart_at!)).toBeGreaterThan(Date.parse(restarting.engine.last_exit!.at));
    const failed = await d.waitFor((h) => h.engine.state === 'failed', 'engine given up');
    expect(failed.engine.next_restart_at).toBeNull();
    const times = readFileSync(starts, 'utf8').trim().split('\n').map(Number);
    expect(times).toHaveLength(4); // the first start and 3 restarts
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    // each wait is at least the doubled backoff (200, 400, 800 ms), plus the time to exit
    gaps.forEach((gap, i) => expect(gap, `gap ${i + 1}: ${gaps.join(', ')}`).toBeGreaterThanOrEqual(200 * 2 ** i));
  });

  it("copies at most SVC_ENGINE_LOG_MAX_BYTES of the engine's output to its log (the host keeps it), then says so", async () => {
    // whatever the agent runs in the engine (a plugin in its config) prints there: 32 MiB made 36 MB of the host's daemon.log
    const { fixtureEngine } = await buildArtifacts();
    const loud = `sh -c 'yes 0123456789abcdef | head -c 2000000; exec "$0" "$1" --port {port}' '${process.execPath}' '${fixtureEngine}'`;
    // a bound that is not a multiple of a pipe's 64 KiB chunks: the last chunk is cut at it, not copied whole
    const d = await start(scratch(), { SVC_ENGINE_COMMAND: loud, SVC_ENGINE_LOG_MAX_BYTES: '100000' });
    await d.waitFor((h) => h.engine.state === 'ready', 'engine ready');
    const copied = d.output().split('\n').filter((line) => line.startsWith('[engine] 0'));
    const bytes = copied.reduce((sum, line) => sum + line.length - '[engine] '.length + 1, 0);
    expect(bytes).toBeGreaterThan(90_000);
    expect(bytes).toBeLessThanOrEqual(100_000 + 1); // (the cut line's newline is added back)
    expect(d.output()).toContain("[engine] the engine's output past 100000 bytes is not logged (SVC_ENGINE_LOG_MAX_BYTES)");
  });

  it('an engine config dir escaping the workspace is refused', async () => {
    const s = scratch();
    writeFileSync(path.join(s.workspace, 'svc.yaml'), 'svc_version: 2\ndefault_agent: a\nagents: {a: {}}\nengine:\n  config_dir: ../outside\n');
    const d = await start(s);
    const failed = await d.waitFor((h) => h.engine.state === 'failed', 'engine refused');
    expect(failed.engine.last_error).toContain('engine.config_dir "../outside" is not a safe relative path');
  });
});

describe('daemon restart', () => {
  it('reopens the root session and does not send the initial prompt again, even without its marker', async () => {
    const s = scratch();
    const env = { SVC_BOOTSTRAP_ENGINE_SESSION: '1', SVC_INITIAL_PROMPT: 'write the docs' };
    const first = await start(s, env);
    const h1 = await first.waitFor((h) => h.engine.initial_prompt_sent_at !== null, 'prompt sent');
    await first.stop();
    const second = await start(s, env);
    const h2 = await second.waitFor((h) => h.engine.root_session_id !== null, 'root session opened');
    expect(h2.engine.root_session_id).toBe(h1.engine.root_session_id);
    await second.stop();
    rmSync(path.join(s.home, '.svc-agent', 'root-session.json'));
    const third = await start(s, env);
    const h3 = await third.waitFor((h) => h.engine.initial_prompt_sent_at !== null, 'root session adopted');
    expect(h3.engine.root_session_id).toBe(h1.engine.root_session_id);
    const calls = readCalls(s.home);
    expect(calls.filter((c) => c.method === 'POST' && c.path === '/session')).toHaveLength(1);
    const prompts = calls.filter((c) => c.path.endsWith('/prompt_async'));
    expect(prompts).toHaveLength(1);
    expect(prompts[0]!.body!.parts).toEqual([{ type: 'text', text: 'write the docs' }]);
  });
});

describe('a turn the engine ends with an error', () => {
  it('is in health as turn_error, its first line, secret values redacted (the engine is the agent\'s: it can echo them)', async () => {
    const secret = 'sk-live-not-for-health';
    const text = `#fixture ${JSON.stringify({ fail: `key ${secret} refused for ${TOKEN}` })}`;
    const daemon = await start(scratch(), { SVC_BOOTSTRAP_ENGINE_SESSION: '1', SVC_INITIAL_PROMPT: text, SVC_PROJECT_SECRET_NAMES: 'MODEL_KEY', MODEL_KEY: secret });
    const h = await daemon.waitFor((x) => x.engine.turn_error !== null && x.engine.turn_error !== undefined, 'the turn error in health');
    expect(h.engine.turn_error).toBe('key *** refused for ***');
    expect(JSON.stringify(h)).not.toContain(secret);
    expect(JSON.stringify(h)).not.toContain(TOKEN);
  });
});

describe('an initial prompt the engine did not take is not lost', () => {
  const text = '#fixture {"crashOnce":true,"end":true}';

  it('the engine died taking it: the restarted engine gets it, once', async () => {
    const s = scratch();
    const daemon = await start(s, { SVC_BOOTSTRAP_ENGINE_SESSION: '1', SVC_INITIAL_PROMPT: text });
    const h = await daemon.waitFor((x) => x.engine.initial_prompt_sent_at !== null, 'the prompt taken by the restarted engine');
    expect(h.engine).toMatchObject({ restarts: 1, initial_prompt_pending: false, root_session_error: null });
    const prompts = readCalls(s.home).filter((c) => c.path.endsWith('/prompt_async'));
    // the first went to the engine that died; the second was taken, and is the session's only user message
    expect(prompts.map((c) => c.body!.parts)).toEqual([[{ type: 'text', text }], [{ type: 'text', text }]]);
    const messages = await (await fetch(`${daemon.url}/session/${h.engine.root_session_id}/message`, signed('engine'))).json() as { info: { role: string } }[];
    expect(messages.filter((m) => m.info.role === 'user')).toHaveLength(1);
  });

  it('a ready engine refused it: health says why while svc-agent asks again, until it is taken', async () => {
    const s = scratch();
    const daemon = await start(s, { SVC_BOOTSTRAP_ENGINE_SESSION: '1', SVC_INITIAL_PROMPT: '#fixture {"refuse":2,"end":true}' });
    const refused = await daemon.waitFor((x) => x.engine.root_session_error !== null, 'the refusal in health');
    expect(refused.engine).toMatchObject({ state: 'ready', initial_prompt_pending: true, initial_prompt_sent_at: null, root_session_error: 'engine refused the initial prompt (500)' });
    const h = await daemon.waitFor((x) => x.engine.initial_prompt_sent_at !== null, 'the prompt taken at the third try');
    expect(h.engine).toMatchObject({ restarts: 0, initial_prompt_pending: false, root_session_error: null });
    expect(readCalls(s.home).filter((c) => c.path.endsWith('/prompt_async'))).toHaveLength(3);
  });
});
