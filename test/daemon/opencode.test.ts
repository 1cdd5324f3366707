// svc-agent with the real engine: the pinned opencode-ai binary, offline. Slow (opencode boots in
// seconds), so one daemon for the whole suite.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT, TOKEN, cleanupArtifacts, freePort, signed, startDaemon, tempDir, type DaemonProcess } from './harness.js';

const OPENCODE = path.join(REPO_ROOT, 'node_modules', '.bin', 'opencode');
const present = existsSync(OPENCODE);
if (!present) console.warn(`skipping the opencode suite: ${OPENCODE} is missing (npm ci installs opencode-ai)`);

describe.skipIf(!present)('svc-agent with the real opencode engine (offline)', () => {
  let daemon: DaemonProcess;
  let workspace: string;
  let home: string;
  let firstEngineState: string;

  beforeAll(async () => {
    workspace = tempDir('oc-ws');
    home = tempDir('oc-home');
    daemon = await startDaemon({ workspace, home }, {
      SVC_ENGINE_COMMAND: `'${OPENCODE}' serve --hostname 127.0.0.1 --port {port}`,
      SVC_ENGINE_PORT: String(await freePort()),
      SVC_ENGINE_BOOT_TIMEOUT_MS: '90000',
      SVC_BOOTSTRAP_ENGINE_SESSION: '1',
      SVC_AGENT_NAME: 'build',
      SVC_INITIAL_PROMPT: 'say hello',
    });
    firstEngineState = (await daemon.health()).engine.state;
  }, 120_000);

  afterAll(async () => {
    await daemon?.stop();
    if (workspace) rmSync(workspace, { recursive: true, force: true });
    if (home) rmSync(home, { recursive: true, force: true });
    cleanupArtifacts();
  });

  it('health moves from booting to ready', async () => {
    expect(firstEngineState).toBe('booting');
    const ready = await daemon.waitFor((h) => h.engine.state === 'ready', 'opencode ready', 90_000);
    expect(ready.status).toBe('ok');
  }, 100_000);

  it('a signed GET /global/health reaches opencode through the daemon; an unsigned one is 401', async () => {
    const res = await fetch(`${daemon.url}/global/health`, signed('engine'));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ healthy: true, version: '1.18.33' });
    const unsigned = await fetch(`${daemon.url}/global/health`);
    expect(unsigned.status).toBe(401);
    expect(await unsigned.text()).toBe('unauthorized');
  });

  it('creates the root session, sends the initial prompt, and shows the offline retry in health', async () => {
    const h = await daemon.waitFor((x) => x.engine.run?.type === 'retry', 'prompt retrying offline', 60_000);
    expect(h.engine.root_session_id).toMatch(/^ses_/);
    expect(h.engine.initial_prompt_sent_at).not.toBeNull();
    const messages = (await (await fetch(`${daemon.url}/session/${h.engine.root_session_id}/message`, signed())).json()) as Array<{ info: { role: string; agent?: string }; parts: Array<{ text?: string }> }>;
    const user = messages.filter((m) => m.info.role === 'user');
    expect(user).toHaveLength(1);
    expect(user[0]!.info.agent).toBe('build');
    expect(user[0]!.parts[0]!.text).toBe('say hello');
  }, 70_000);

  it('/svc/abort stops the run', async () => {
    const res = await fetch(`${daemon.url}/svc/abort`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ aborted: true });
    const h = await daemon.waitFor((x) => x.engine.run?.type === 'idle', 'run idle after abort', 30_000);
    expect(h.engine.state).toBe('ready');
  }, 40_000);

  it('streams the engine event stream (SSE) through the daemon', async () => {
    const res = await fetch(`${daemon.url}/event`, signed());
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const reader = res.body!.getReader();
    const { value } = await reader.read();
    expect(Buffer.from(value!).toString()).toContain('server.connected');
    await reader.cancel();
  });
});
