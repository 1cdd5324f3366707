// svc-agent says why its engine does not work (issue 23, the daemon's part): in /svc/health,
// `engine.last_error` keeps the cause after giving up (ENOENT, a crash's last stderr lines),
// `engine.stderr_tail` the engine's last stderr lines, `engine.model_error` "cannot reach the
// model: ..." while the real opencode retries a prompt; secret values never appear.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { DaemonPool, freePort, type Health } from './harness.js';
import { OPENCODE_OFFLINE_ENV, opencodeConfig } from '../fixtures/model-server.js';
import { pinnedEngineBinary } from '../../src/lib/engine-path.js';

type Explained = Health & { engine: Health['engine'] & { stderr_tail: string[]; model_error: string | null } };

const pool = new DaemonPool();
afterEach(() => pool.stopAll());
afterAll(() => pool.cleanup());

describe('svc-agent explains a failing engine', () => {
  it('an engine binary that is not there: ENOENT stays in last_error after giving up', async () => {
    const d = await pool.start(pool.scratch(), { SVC_ENGINE_COMMAND: '/nonexistent/engine --port {port}', SVC_ENGINE_MAX_RESTARTS: '1', SVC_ENGINE_RESTART_BACKOFF_MS: '20' });
    const failed = await d.waitFor((h) => h.engine.state === 'failed', 'engine failed');
    expect(failed.engine.last_error).toMatch(/^engine exited 2 times within \d+ ms; giving up; the last: cannot start \/nonexistent\/engine: spawn \/nonexistent\/engine ENOENT$/);
  });

  it('a crashing engine: its exit and last stderr lines, with secret values redacted', async () => {
    const script = 'console.error("loading config"); console.error("bad key " + process.env.MODEL_KEY + " for " + process.env.SVC_SANDBOX_TOKEN); process.exit(3)';
    const d = await pool.start(pool.scratch(), {
      SVC_ENGINE_COMMAND: `'${process.execPath}' -e '${script}'`,
      SVC_ENGINE_MAX_RESTARTS: '1', SVC_ENGINE_RESTART_BACKOFF_MS: '20',
      SVC_PROJECT_SECRET_NAMES: 'MODEL_KEY', MODEL_KEY: 'sk-live-not-for-health',
    });
    const failed = await d.waitFor((h) => h.engine.state === 'failed', 'engine failed') as Explained;
    expect(failed.engine.last_error).toMatch(/giving up; the last: the engine exited with code 3: loading config \| bad key \*\*\* for \*\*\*$/);
    expect(failed.engine.stderr_tail).toEqual(['loading config', 'bad key *** for ***']);
    expect(JSON.stringify(failed)).not.toContain('sk-live-not-for-health');
  });

  const opencode = pinnedEngineBinary();
  it.skipIf(!opencode)('the real opencode whose model is unreachable: model_error says so while it retries', async () => {
    const dirs = pool.scratch();
    // the project's engine config names a model server on a port nothing listens on
    const closed = await freePort();
    mkdirSync(path.join(dirs.workspace, '.svc', 'engine'), { recursive: true });
    writeFileSync(path.join(dirs.workspace, '.svc', 'engine', 'opencode.json'), JSON.stringify(opencodeConfig(`http://127.0.0.1:${closed}/v1`)));
    const d = await pool.start(dirs, {
      SVC_ENGINE_COMMAND: `'${opencode}' serve --hostname 127.0.0.1 --port {port}`,
      SVC_ENGINE_BOOT_TIMEOUT_MS: '90000',
      SVC_BOOTSTRAP_ENGINE_SESSION: '1',
      SVC_INITIAL_PROMPT: 'say hello',
      ...OPENCODE_OFFLINE_ENV,
    });
    const retrying = await d.waitFor((h) => h.engine.run?.type === 'retry', 'the prompt retrying', 90_000) as Explained;
    expect(retrying.engine.model_error).toMatch(/^cannot reach the model: .+/);
    expect(retrying.status).toBe('ok'); // the engine itself runs; the session's controller decides what this means
  }, 120_000);
});
