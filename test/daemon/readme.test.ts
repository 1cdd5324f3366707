// The README's svc-agent example works as written: its environment (parsed from the README's
// sh block) with the fixture engine in place of opencode; /svc/abort then finds a root session.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DaemonPool, REPO_ROOT } from './harness.js';

const pool = new DaemonPool();
afterAll(() => pool.cleanup());

/** The `VAR=value` assignments and the abort curl of the README block that starts svc-agent. */
function readmeExample(): { env: Record<string, string>; abortHeader: string } {
  const readme = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
  // the README starts it as `node bin/svc-agent.js & AGENT=$!` (its pid, to stop it after)
  const start = 'svc-agent.js &';
  const block = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!).find((b) => b.includes(start));
  if (!block) throw new Error('README has no sh block starting svc-agent');
  // shell variables the block sets with a command (TOKEN=$(openssl rand ...)) get a random value
  const vars = new Map([...block.matchAll(/^([A-Z_]+)=\$\(/gm)].map((m) => [m[1]!, randomBytes(32).toString('hex')]));
  const expand = (text: string) => text.replace(/\$([A-Z_]+)/g, (all, name: string) => vars.get(name) ?? all);
  const command = block.slice(0, block.indexOf(start)).replace(/\\\n/g, ' ');
  const env = Object.fromEntries([...command.matchAll(/\b(SVC_[A-Z_]+)=(\S+)/g)].map((m) => [m[1]!, expand(m[2]!)]));
  const abortHeader = /curl [^\n]*-H ['"]([^'"]+)['"][^\n]*\/svc\/abort/.exec(block)?.[1];
  if (!abortHeader) throw new Error('README has no /svc/abort curl');
  return { env, abortHeader: expand(abortHeader) };
}

describe('README svc-agent example', () => {
  it('bootstraps a root session, so /svc/abort answers 200 with the README header', async () => {
    const { env, abortHeader } = readmeExample();
    expect(env.SVC_BOOTSTRAP_ENGINE_SESSION).toBe('1');
    const dirs = pool.scratch();
    // the README's own values, but scratch dirs and a free port instead of $PWD and 8000
    const { SVC_WORKSPACE: _w, SVC_ENGINE_HOME: _h, ...readmeEnv } = env;
    const daemon = await pool.start(dirs, readmeEnv);
    await daemon.waitFor((h) => h.engine.root_session_id !== null, 'a root session');
    const [name, value] = abortHeader.split(/:\s*/, 2) as [string, string];
    const res = await fetch(`${daemon.url}/svc/abort`, { method: 'POST', headers: { [name]: value } });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ session_id: expect.any(String) });
  });
});
