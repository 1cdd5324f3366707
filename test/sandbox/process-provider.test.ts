// The process provider with the real svc-agent and the fixture engine, isolated (src/lib/jail):
// the environment the engine sees, nothing secret in argv, a second provider (a restarted
// operator) finds the sandbox again, a dead sandbox is restarted, never two processes per
// sandbox, delete removes its jail too. The repository is a sandbox mount (no git gateway here).
import { execFileSync, spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ProcessSandboxProvider } from '../../src/sandbox/process/index.js';
import { launchEnv, readDaemonHealth, sessionEnv, type SandboxRequest } from '../../src/sandbox/index.js';
import { newSandboxToken } from '../../src/lib/sandbox-token.js';
import { signContextHeader } from '../../src/lib/context-header.js';
import { Jail, packageToolchain } from '../../src/lib/jail/index.js';
import { buildArtifacts, REPO_ROOT } from '../daemon/harness.js';
import { makeRepo, waitFor } from '../dev/util.js';
import { isRunning, processTree } from '../../src/lib/proc.js';

const SESSION = '5e0b7f5c-3a51-4c2f-9d1b-7a3e9c0d1f22';
const WARM_SESSION = '0c9d8e7f-1a2b-4c3d-8e4f-5a6b7c8d9e0f';
const PROJECT = 'a1b2c3d4-0000-4000-8000-00000000aaaa';
let tmp: string;
let request: SandboxRequest;
let providerOptions: ConstructorParameters<typeof ProcessSandboxProvider>[0];
let fixtureEnginePath: string;
let repoPath: string;
const token = newSandboxToken(SESSION);

const signed = (address: string, urlPath: string) => fetch(`http://${address}${urlPath}`, {
  headers: { 'x-svc-user-context': signContextHeader(token, { sub: '00000000-0000-4000-8000-000000000001', sid: SESSION, scope: '*' }) },
});

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'svc-process-provider-'));
  const repo = path.join(tmp, 'repo');
  repoPath = repo;
  makeRepo(repo, { 'README.md': '# hi\n' });
  // the daemon pushes the session branch at boot: the sandbox (its own uid) may write this repository
  execFileSync('chmod', ['-R', 'a+rwX', repo]);
  const gitconfig = path.join(tmp, 'gitconfig');
  writeFileSync(gitconfig, '[safe]\n\tdirectory = *\n');
  const { daemon, fixtureEngine } = await buildArtifacts();
  fixtureEnginePath = fixtureEngine;
  providerOptions = {
    dataDir: path.join(tmp, 'sandboxes'),
    agentCommand: [process.execPath, daemon],
    engineCommand: `'${process.execPath}' '${fixtureEngine}' --port {port}`,
    // the repository is the host's (uid 0, nobody inside): git must not refuse it as foreign
    daemonEnv: { SVC_ENGINE_RESTART_BACKOFF_MS: '50', GIT_CONFIG_GLOBAL: gitconfig },
    stopGraceMs: 3000,
    isolation: new Jail({ apiPorts: [], toolchain: packageToolchain(REPO_ROOT), mounts: [{ path: repo, writable: true }, { path: gitconfig, writable: false }] }),
  };
  const plain = sessionEnv({ projectId: PROJECT, sessionId: SESSION, repoUrl: repo, defaultBranch: 'main', baseRef: 'main', apiUrl: 'http://127.0.0.1:9/v1', agent: 'default', initialPrompt: 'hello' });
  const { env, secretEnv } = launchEnv(plain, { sandboxToken: token, cliToken: 'svc_clitoken', projectSecrets: { API_KEY: 'sekrit-value' }, secretsRevision: '7' });
  request = { namespace: 'default', name: SESSION, uid: 'uid-1', sessionId: SESSION, projectId: PROJECT, template: {}, env, secretEnv };
}, 60_000);

afterAll(async () => {
  await new ProcessSandboxProvider(providerOptions).delete(request).catch(() => {});
  rmSync(tmp, { recursive: true, force: true });
});

describe('process provider', () => {
  it('starts svc-agent with the SPEC §2.6 environment, finds it again from a new provider, restarts it when it died, deletes it', async () => {
    const provider = new ProcessSandboxProvider(providerOptions);
    expect(await provider.observe(request)).toEqual({ state: 'absent' });
    const started = await provider.ensure(request);
    expect(started.state).toBe('provisioning');
    const address = started.address!;
    const health = await waitFor('engine ready', async () => {
      const h = await readDaemonHealth(address);
      return h?.engine.state === 'ready' && h.engine.initial_prompt_sent_at ? h : undefined;
    }, 30_000);
    expect(health.daemon.state).toBe('ready');

    // what the engine (and so the agent) sees
    const engineEnv = (await (await signed(address, '/fixture/env')).json()) as Record<string, string>;
    expect(engineEnv.SVC_SERVICE_PORT).toBe('8000');
    expect(engineEnv.HOME).toBe('/opt/svc/home');
    expect(address).toMatch(/^10\.\d+\.\d+\.\d+:8000$/);
    expect(engineEnv).not.toHaveProperty('SVC_WORKSPACE');
    expect(engineEnv).not.toHaveProperty('SVC_DAEMON_PORT');
    expect(engineEnv.SVC_SESSION_ID).toBe(SESSION);
    expect(engineEnv.SVC_CLI_TOKEN).toBe('svc_clitoken');
    expect(engineEnv.API_KEY).toBe('sekrit-value');
    expect(engineEnv.SVC_PROJECT_SECRET_NAMES).toBe('API_KEY');
    expect(engineEnv).not.toHaveProperty('KUBECONFIG');

    // nothing secret in argv
    const pid = started.detail!.pid!;
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    expect(argv).not.toContain(token);
    expect(argv).not.toContain('svc_clitoken');
    expect(argv).not.toContain('sekrit-value');

    // a restarted operator (a new provider) finds the same process; ensure never starts a second one
    const again = new ProcessSandboxProvider(providerOptions);
    expect(await again.observe(request)).toMatchObject({ state: 'running', address, detail: { pid } });
    const [a, b] = await Promise.all([again.ensure(request), again.ensure(request)]);
    expect(a.detail?.pid).toBe(pid);
    expect(b.detail?.pid).toBe(pid);

    // it dies: seen as absent with a reason, and ensure restarts it; the engine home is kept,
    // so the initial prompt is not sent again
    process.kill(-pid, 'SIGKILL');
    await waitFor('the process gone', async () => (await again.observe(request)).state === 'absent');
    expect((await again.observe(request)).reason).toBe('Exited');
    const restarted = await again.ensure(request);
    expect(restarted.detail!.pid).not.toBe(pid);
    const after = await waitFor('engine ready again', async () => {
      const h = await readDaemonHealth(restarted.address!);
      return h?.engine.state === 'ready' && h.engine.root_session_id ? h : undefined;
    }, 30_000);
    expect(after.engine.initial_prompt_sent_at).toBe(health.engine.initial_prompt_sent_at);

    const slot = (JSON.parse(readFileSync(path.join(providerOptions.dataDir, 'default', SESSION, 'state.json'), 'utf8')) as { slot: number }).slot;
    expect(existsSync(`/run/netns/svcj-${slot}`)).toBe(true);
    await again.delete(request);
    expect(await again.observe(request)).toEqual({ state: 'absent' });
    expect(existsSync(`/run/netns/svcj-${slot}`)).toBe(false);
    await waitFor('the daemon gone', async () => { try { process.kill(restarted.detail!.pid!, 0); return false; } catch { return true; } });
  }, 90_000);

  it('delete resolves only when nothing of the sandbox runs: the daemon, its engine, and what the agent started with setsid', async () => {
    const provider = new ProcessSandboxProvider(providerOptions);
    const started = await provider.ensure(request);
    const address = started.address!;
    const h = await waitFor('the root session', async () => {
      const x = await readDaemonHealth(address);
      return x?.engine.state === 'ready' && x.engine.root_session_id ? x : undefined;
    }, 30_000);
    const marker = `700.${process.pid}${Date.now() % 100000}`;
    const res = await fetch(`http://${address}/session/${h.engine.root_session_id}/prompt_async`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-svc-user-context': signContextHeader(token, { sub: '00000000-0000-4000-8000-000000000001', sid: SESSION, scope: '*' }) },
      body: JSON.stringify({ parts: [{ type: 'text', text: `#fixture ${JSON.stringify({ spawn: `sleep ${marker}` })}` }] }),
    });
    expect(res.status).toBe(204);
    const running = () => readdirSync('/proc').filter((e) => /^\d+$/.test(e)).filter((pid) => {
      try {
        return isRunning(Number(pid)) && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker);
      } catch { return false; }
    });
    // sh -c, and the sleep it may fork (dash execs it or not)
    await waitFor('the background process', async () => running().length >= 1 || undefined, 10_000);
    // the engine as the host sees it (the pid it reports is its PID namespace's own)
    const engines = () => readdirSync('/proc').filter((e) => /^\d+$/.test(e)).filter((pid) => {
      try {
        return isRunning(Number(pid))
          && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(fixtureEnginePath)
          && readFileSync(`/proc/${pid}/environ`, 'latin1').includes(`SVC_SESSION_ID=${SESSION}\0`);
      } catch { return false; }
    });
    expect(engines()).toHaveLength(1);
    await provider.delete(request);
    // at once, no waiting: delete's promise is the report
    expect(running()).toEqual([]);
    expect(engines()).toEqual([]);
    expect(() => process.kill(started.detail!.pid!, 0)).toThrow();
  }, 60_000);

  it('stopRecorded (svc dev stopping): a sandbox no provider of this run adopted is stopped, its slot freed, its folder kept', async () => {
    const started = await new ProcessSandboxProvider(providerOptions).ensure(request);
    const pid = started.detail!.pid!;
    const dir = path.join(providerOptions.dataDir, 'default', SESSION);
    const slot = (JSON.parse(readFileSync(path.join(dir, 'state.json'), 'utf8')) as { slot: number }).slot;
    // a slot the crashed operator took just before it died, before any state file named it
    const jail = providerOptions.isolation as Jail;
    const orphan = await jail.allocate(path.resolve(providerOptions.dataDir), 'default/crashed-mid-start', [8000]);
    // a new provider (svc dev after a crash and restart) that never observed the sandbox
    await new ProcessSandboxProvider({ ...providerOptions, agentCommand: [] }).stopRecorded();
    expect(() => process.kill(pid, 0)).toThrow();
    for (const n of [slot, orphan.index]) {
      expect(existsSync(`/run/netns/svcj-${n}`)).toBe(false);
      expect(existsSync(`/run/svc-jail/slots/${n}.json`)).toBe(false);
    }
    expect(existsSync(path.join(dir, 'home'))).toBe(true);
    // and the next start finds it gone and starts it again
    expect(await new ProcessSandboxProvider(providerOptions).observe(request)).toMatchObject({ state: 'absent', reason: 'Exited' });
  }, 60_000);

  it('a sandbox held to its template\'s memory: its program past it is ended by the kernel, and the sandbox fails saying so (OOMKilled, the limit)', async () => {
    // in svc-agent's place, a program that takes memory until something stops it
    const provider = new ProcessSandboxProvider({ ...providerOptions, agentCommand: [process.execPath, '-e', 'const held = []; for (;;) held.push(Buffer.alloc(4 * 2 ** 20, 1))'] });
    const small = { ...request, name: 'oom-sandbox', uid: 'uid-oom', template: { memory: 64 } };
    const started = await provider.ensure(small);
    try {
      const seen = await waitFor('the sandbox gone', async () => {
        const o = await provider.observe(small);
        return o.state === 'absent' || o.state === 'failed' ? o : undefined;
      }, 30_000);
      expect(seen.state).toBe('failed'); // not started again: it would only run out again
      expect(seen.reason, `${seen.message}: ${readFileSync(path.join(providerOptions.dataDir, 'default', 'oom-sandbox', 'daemon.log'), 'utf8').slice(-2000)}`).toBe('OOMKilled');
      expect(seen.message).toMatch(/exited after the kernel ended \d+ of its processes for using its memory limit of 64 MiB/);
      expect(seen.message).toContain(`the sandbox process ${started.detail!.pid} exited`);
    } finally {
      await provider.delete(small);
    }
  }, 60_000);

  it('a sandbox over its template\'s disk is evicted as the kubelet evicts a pod: stopped, failed as Evicted with the sizes, not started again, its folders kept; one under its own limit runs on', async () => {
    const provider = new ProcessSandboxProvider({ ...providerOptions, diskCheckIntervalMs: 200 });
    const big = { ...request, name: 'disk-sandbox', uid: 'uid-disk', template: { disk: 2 } };
    const roomy = { ...request, name: 'roomy-sandbox', uid: 'uid-roomy', template: { disk: 64 } };
    const started = await provider.ensure(big);
    const alongside = await provider.ensure(roomy);
    try {
      const address = started.address!;
      await waitFor('engine ready', async () => (await readDaemonHealth(address))?.engine.state === 'ready', 30_000);
      await waitFor('the other engine ready', async () => (await readDaemonHealth(alongside.address!))?.engine.state === 'ready', 30_000);
      expect((await provider.observe(big)).state).toBe('running'); // under 2 MiB so far
      writeFileSync(path.join(providerOptions.dataDir, 'default', 'roomy-sandbox', 'workspace', 'big.bin'), Buffer.alloc(4 * 2 ** 20, 1));
      const workspace = path.join(providerOptions.dataDir, 'default', 'disk-sandbox', 'workspace');
      writeFileSync(path.join(workspace, 'big.bin'), Buffer.alloc(4 * 2 ** 20, 1));
      const seen = await waitFor('evicted', async () => {
        const o = await provider.observe(big);
        return o.state === 'failed' ? o : undefined;
      }, 30_000);
      expect(seen.reason).toBe('Evicted');
      expect(seen.message).toMatch(/use [4-9] MiB, over its disk limit of 2 MiB/);
      await waitFor('the daemon gone', async () => { try { process.kill(started.detail!.pid!, 0); return false; } catch { return true; } });
      expect(await provider.ensure(big)).toMatchObject({ state: 'failed', reason: 'Evicted' });
      expect(existsSync(path.join(workspace, 'big.bin'))).toBe(true);
      // measured in the same passes, the same 4 MiB under its 64
      expect((await provider.observe(roomy)).state).toBe('running');
    } finally {
      await provider.delete(big);
      await provider.delete(roomy);
      await provider.stopAll();
    }
  }, 60_000);

  it('a start after an operator crashed between its spawn and state.json kills what that operator left', async () => {
    const crashed = { ...request, name: '7d1e2f30-4a5b-4c6d-8e7f-9a0b1c2d3e4f', uid: 'uid-strays' };
    const home = path.join(providerOptions.dataDir, 'default', crashed.name, 'home');
    mkdirSync(home, { recursive: true });
    // what the crashed operator started: it names the home, no state file names it
    const left = spawn('sleep', ['300'], { env: { ...process.env, SVC_ENGINE_HOME: home }, stdio: 'ignore', detached: true });
    const ended = new Promise<string>((resolve) => left.once('exit', (_code, signal) => resolve(String(signal))));
    const provider = new ProcessSandboxProvider(providerOptions);
    try {
      expect((await provider.ensure(crashed)).state).toBe('provisioning');
      expect(await Promise.race([ended, new Promise((resolve) => setTimeout(() => resolve('still running'), 5_000))])).toBe('SIGKILL');
    } finally {
      try { process.kill(left.pid!, 'SIGKILL'); } catch { /* gone */ }
      await provider.delete(crashed);
    }
  }, 60_000);
});

/**
 * The node processes this test file started (not the jail's launchers, whose argv and environment
 * are alike, nor the sandboxes of a `svc dev` another file runs at the same time) whose argv has
 * `marker` and whose environment `entry`.
 */
function nodesWith(marker: string, entry: string): number[] {
  const ours = new Set(processTree(process.pid));
  return processesWith(marker).filter((pid) => {
    try {
      return ours.has(pid) && readlinkSync(`/proc/${pid}/exe`) === process.execPath && readFileSync(`/proc/${pid}/environ`, 'latin1').includes(`${entry}\0`);
    } catch { return false; }
  });
}

/** The distinct nice values of `pid`'s threads (proc(5): field 19 of each task's stat). */
function niceness(pid: number): number[] {
  const values = readdirSync(`/proc/${pid}/task`).map((tid) => {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19 - 3]);
  });
  return [...new Set(values)];
}

/** The jail slots of `dataDir` that warm sandboxes hold (their records name them `.warm/<id>`). */
function warmSlots(dataDir: string): number[] {
  return readdirSync('/run/svc-jail/slots').flatMap((file) => {
    try {
      const record = JSON.parse(readFileSync(`/run/svc-jail/slots/${file}`, 'utf8')) as { index: number; owner: string; key: string };
      return record.owner === path.resolve(dataDir) && record.key.startsWith('.warm/') ? [record.index] : [];
    } catch { return []; }
  });
}

/** Live processes (not zombies) whose command line has `marker`. */
function processesWith(marker: string): number[] {
  return readdirSync('/proc').filter((e) => /^\d+$/.test(e)).flatMap((pid) => {
    try {
      if (!isRunning(Number(pid))) return [];
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker) ? [Number(pid)] : [];
    } catch { return []; }
  });
}

describe('warm sandboxes (docs/sandboxes.md "Warm sandboxes")', () => {
  const warmToken = newSandboxToken(WARM_SESSION);
  const warmRequest = (): SandboxRequest => {
    const plain = sessionEnv({ projectId: PROJECT, sessionId: WARM_SESSION, repoUrl: repoPath, defaultBranch: 'main', baseRef: 'main', apiUrl: 'http://127.0.0.1:9/v1', agent: 'default' });
    const { env, secretEnv } = launchEnv(plain, { sandboxToken: warmToken, cliToken: 'svc_warmclitoken', projectSecrets: { QUOTED: "it's \"quoted\" $HOME `x`\nline two" }, secretsRevision: '1' });
    return { namespace: 'default', name: WARM_SESSION, uid: 'uid-warm', sessionId: WARM_SESSION, projectId: PROJECT, template: {}, env, secretEnv };
  };

  /** A provider in `tmp/<name>` keeping one warm sandbox, once it waits; the slot it holds. */
  const warmProvider = async (name: string) => {
    const dataDir = path.join(tmp, name);
    const provider = new ProcessSandboxProvider({ ...providerOptions, dataDir, warm: 1 });
    // a test that fails midway leaves no sandbox of the same session to the next one's process count
    onTestFinished(() => provider.stopAll().catch(() => undefined));
    await provider.sweepOnce();
    await waitFor('a warm sandbox ready to be given', async () => provider.warmWaiting === 1 || undefined, 15_000);
    return { dataDir, provider, warmSlot: warmSlots(dataDir)[0] };
  };

  it('the first start gets the warm one: its svc-agent has the session\'s whole environment, nothing secret in argv; another warms; stopAll leaves nothing', async () => {
    const { dataDir, provider, warmSlot } = await warmProvider('warm-sandboxes');
    expect(warmSlots(dataDir)).toHaveLength(1);
    expect(readdirSync(path.join(dataDir, '.warm'))).toHaveLength(1);
    // svc-agent itself waits, loaded, yielding the CPU to sandboxes at work
    const waiting = await waitFor('the warm svc-agent', async () => {
      const found = nodesWith(providerOptions.agentCommand[1]!, 'SVC_AGENT_SETTINGS=stdin');
      return found.length === 1 ? found[0] : undefined;
    }, 15_000);
    expect(niceness(waiting)).toEqual([19]);

    const request = warmRequest();
    const started = await provider.ensure(request);
    const dir = path.join(dataDir, 'default', WARM_SESSION);
    // the warm one's slot and folder are the sandbox's now
    expect((JSON.parse(readFileSync(path.join(dir, 'state.json'), 'utf8')) as { slot: number }).slot).toBe(warmSlot);
    expect(JSON.parse(readFileSync(`/run/svc-jail/slots/${warmSlot}.json`, 'utf8'))).toMatchObject({ key: `default/${WARM_SESSION}` });
    const health = await waitFor('engine ready', async () => {
      const h = await readDaemonHealth(started.address!);
      return h?.engine.state === 'ready' ? h : undefined;
    }, 30_000);
    expect(health.repository?.branch).toBe(WARM_SESSION);

    // that svc-agent shows the environment a cold start gives it, and runs at the usual priority
    // now, as its engine does; the engine sees the secret's value as it was, quotes, newline and all
    const agents = nodesWith(providerOptions.agentCommand[1]!, `SVC_SESSION_ID=${WARM_SESSION}`);
    expect(agents).toEqual([waiting]);
    const agentEnv = readFileSync(`/proc/${waiting}/environ`, 'latin1').split('\0');
    expect(agentEnv).toContain(`SVC_SANDBOX_TOKEN=${warmToken}`);
    expect(agentEnv).toContain('HOME=/opt/svc/home');
    expect(agentEnv.filter((e) => e.startsWith('SVC_AGENT_SETTINGS='))).toEqual([]);
    expect(niceness(waiting)).toEqual([0]);
    const engines = nodesWith(fixtureEnginePath, `SVC_SESSION_ID=${WARM_SESSION}`);
    expect(engines).toHaveLength(1);
    expect(niceness(engines[0]!)).toEqual([0]);
    const engineEnv = (await (await fetch(`http://${started.address}/fixture/env`, {
      headers: { 'x-svc-user-context': signContextHeader(warmToken, { sub: '00000000-0000-4000-8000-000000000001', sid: WARM_SESSION, scope: '*' }) },
    })).json()) as Record<string, string>;
    expect(engineEnv.QUOTED).toBe("it's \"quoted\" $HOME `x`\nline two");
    expect(engineEnv.SVC_CLI_TOKEN).toBe('svc_warmclitoken');
    for (const pid of agents) {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      expect(argv).not.toContain(warmToken);
      expect(argv).not.toContain('svc_warmclitoken');
      expect(argv).not.toContain('quoted');
    }
    // nothing of the settings was left on disk: no file of the sandbox holds its tokens
    const files = (readdirSync(dir, { recursive: true }) as string[]).map((f) => path.join(dir, f)).filter((f) => statSync(f).isFile());
    expect(files.length).toBeGreaterThan(0);
    expect(files.filter((f) => { const text = readFileSync(f, 'latin1'); return text.includes(warmToken) || text.includes('svc_warmclitoken'); })).toEqual([]);

    // the next one warms in a slot of its own
    await waitFor('the next warm sandbox', async () => provider.warmWaiting === 1 || undefined, 15_000);
    const next = warmSlots(dataDir).find((n) => n !== warmSlot)!;
    expect(next).not.toBe(warmSlot);

    await provider.stopAll();
    expect(warmSlots(dataDir)).toEqual([]);
    expect(existsSync(`/run/netns/svcj-${next}`)).toBe(false);
    expect(existsSync(path.join(dataDir, '.warm'))).toBe(false);
    expect(processesWith('').filter((pid) => { try { return readFileSync(`/proc/${pid}/environ`, 'latin1').includes(`SVC_SESSION_ID=${WARM_SESSION}\0`); } catch { return false; } })).toEqual([]);
    await provider.delete(request);
  }, 90_000);

  it('an operator that stops after the next one leads (one node, one folder) leaves the next one\'s warm sandbox alone', async () => {
    const { dataDir, provider: old } = await warmProvider('warm-handover');
    // the next leader sweeps what no sandbox holds (the old one's warm sandbox among it) and warms its own
    const next = new ProcessSandboxProvider({ ...providerOptions, dataDir, warm: 1 });
    await next.sweepOnce();
    await waitFor('the next leader\'s warm sandbox', async () => next.warmWaiting === 1 || undefined, 15_000);
    const [ownDir] = readdirSync(path.join(dataDir, '.warm'));
    const [ownSlot] = warmSlots(dataDir);
    await old.stopAll();
    expect(readdirSync(path.join(dataDir, '.warm'))).toEqual([ownDir]);
    expect(warmSlots(dataDir)).toEqual([ownSlot]);
    expect(next.warmWaiting).toBe(1);
    await next.stopAll();
    expect(existsSync(path.join(dataDir, '.warm'))).toBe(false);
    expect(warmSlots(dataDir)).toEqual([]);
  }, 90_000);

  it('a session whose environment is larger than a warm sandbox keeps room for starts cold, and the warm one keeps waiting', async () => {
    const { dataDir, provider, warmSlot } = await warmProvider('warm-too-large');
    const request = warmRequest();
    const large = Object.fromEntries(Array.from({ length: 4 }, (_, i) => [`LARGE_${i}`, `${i}`.repeat(100 * 1024)]));
    const started = await provider.ensure({ ...request, secretEnv: { ...request.secretEnv, ...large } });
    const slot = (JSON.parse(readFileSync(path.join(dataDir, 'default', WARM_SESSION, 'state.json'), 'utf8')) as { slot: number }).slot;
    expect(slot).not.toBe(warmSlot);
    expect(provider.warmWaiting).toBe(1);
    await waitFor('engine ready', async () => ((await readDaemonHealth(started.address!))?.engine.state === 'ready') || undefined, 30_000);
    const agents = nodesWith(providerOptions.agentCommand[1]!, `SVC_SESSION_ID=${WARM_SESSION}`);
    expect(agents).toHaveLength(1);
    expect(readFileSync(`/proc/${agents[0]}/environ`, 'latin1').split('\0')).toContain(`LARGE_3=${large.LARGE_3}`);
    await provider.stopAll();
    await provider.delete(request);
  }, 90_000);

  it('an operator killed while a sandbox waits: its svc-agent ends with it, and the next operator frees its slot', async () => {
    const dataDir = path.join(tmp, 'warm-crash');
    const script = path.join(tmp, 'warm-operator.mts'); // ESM (top-level await) wherever tmp is
    writeFileSync(script, `
      import { ProcessSandboxProvider } from ${JSON.stringify(path.join(REPO_ROOT, 'src/sandbox/process/index.ts'))};
      import { Jail } from ${JSON.stringify(path.join(REPO_ROOT, 'src/lib/jail/index.ts'))};
      const provider = new ProcessSandboxProvider({ dataDir: ${JSON.stringify(dataDir)}, agentCommand: ${JSON.stringify(providerOptions.agentCommand)}, isolation: new Jail({ apiPorts: [], toolchain: ${JSON.stringify(packageToolchain(REPO_ROOT))} }), warm: 1 });
      await provider.sweepOnce();
      setInterval(() => undefined, 1000);
    `);
    const operator = spawn(process.execPath, ['--import', 'tsx', script], { stdio: 'ignore' });
    const [slot] = await waitFor('a warm sandbox', async () => (warmSlots(dataDir).length === 1 ? warmSlots(dataDir) : undefined), 20_000);
    const inSlot = () => execFileSync('ip', ['netns', 'pids', `svcj-${slot}`], { encoding: 'utf8' }).split('\n').filter(Boolean);
    // its record comes first, then its network, then its svc-agent
    await waitFor('its svc-agent running in the slot', async () => { try { return inSlot().length > 0 || undefined; } catch { return undefined; } }, 20_000);
    operator.kill('SIGKILL');
    // its svc-agent reads the end of its settings (the pipe closed) and ends, starting nothing
    await waitFor('its svc-agent gone', async () => inSlot().length === 0 || undefined, 10_000);
    // the next operator (a new provider) frees the slot and the folder, and warms its own
    const provider = new ProcessSandboxProvider({ ...providerOptions, dataDir, warm: 1 });
    await provider.sweepOnce();
    expect(existsSync(`/run/svc-jail/slots/${slot}.json`)).toBe(false);
    expect(existsSync(`/run/netns/svcj-${slot}`)).toBe(false);
    await waitFor('its own warm sandbox', async () => provider.warmWaiting === 1 || undefined, 15_000);
    await provider.stopAll();
    expect(warmSlots(dataDir)).toEqual([]);
  }, 60_000);
});
