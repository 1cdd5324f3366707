// Issue 20's attacks on one machine, replayed by a malicious agent on both local providers: the
// attacker's engine (test/fixtures/attacker) tries, from inside its sandbox, to read svc dev's
// data directory (the admin token), another project's workspace and another sandbox's secrets in
// /proc, to signal and trace svc's processes, to reach the local cluster, the operator's metrics
// and another sandbox's daemon (also through its own daemon's /proxy), to push straight into the
// host repository and to be uid 0. Every attempt must be blocked; svc keeps running; the local
// cluster answers 401 to a caller without its token.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtureEngineArgs, REPO_ROOT, removeDevDir, startDev, type DevInstance } from '../helpers/dev.js';
import { makeRepo, runOk, waitFor } from '../dev/util.js';

interface Attempt { name: string; blocked: boolean; detail: string }
interface Report { done: boolean; attempts: Attempt[] }

/** What the attacker tries (test/fixtures/attacker), in order. */
const ATTACKS = [
  'read the data directory\'s env file (the admin token)',
  'read ../../../../env from the engine home',
  'list the data directory',
  'read another project\'s workspace',
  'list another project\'s workspace',
  'list /root',
  'list /home',
  'read another sandbox\'s secrets in /proc/*/environ',
  'signal svc dev, its API and its operator',
  'read the API process\'s memory view (/proc/PID/environ, ptrace access)',
  'ptrace the API process',
  'see svc\'s processes in /proc',
  'reach the local cluster\'s port',
  'reach the operator\'s metrics',
  'read the API\'s metrics (every project\'s names and token counts)',
  'reach another sandbox\'s daemon',
  'reach the local cluster through its own daemon\'s /proxy',
  'push straight into the host repository',
  'be uid 0',
  'fork without bound',
];
/** The sandboxes' task limit in this run (SVC_SANDBOX_MAX_PIDS): small, so that the fork bomb is cheap. */
const MAX_PIDS = 256;
const bundleDir = path.join(REPO_ROOT, 'node_modules', '.cache', 'svc-attacker', String(process.pid));
let attacker: string;

beforeAll(async () => {
  mkdirSync(bundleDir, { recursive: true });
  attacker = path.join(bundleDir, 'attacker.js');
  await build({ entryPoints: [path.join(REPO_ROOT, 'test/fixtures/attacker/main.ts')], bundle: true, platform: 'node', format: 'esm', target: 'node20', outfile: attacker, logLevel: 'error' });
});
afterAll(() => rmSync(bundleDir, { recursive: true, force: true }));

/** Children of `parent` whose command line contains `script`. */
function childPid(parent: number, script: string): number {
  for (const entry of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === parent && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(script)) return Number(entry);
    } catch { /* gone */ }
  }
  throw new Error(`no child ${script} of ${parent}`);
}

const alive = (pid: number) => { try { process.kill(pid, 0); return true; } catch { return false; } };

describe.each(['process', 'kubernetes'] as const)('a malicious agent on the %s provider', (provider) => {
  let tmp: string;
  let dev: DevInstance;
  const projects: Record<string, string> = {};
  const hostRepos: Record<string, string> = {};
  let report: Report;
  let attackerSession: string;
  let kubeUrl: string;

  const kubectl = (...args: string[]) => runOk('kubectl', args, dev.env);
  async function api<T>(method: string, urlPath: string, body?: unknown): Promise<{ status: number; body: T }> {
    const res = await fetch(dev.apiUrl + urlPath, {
      method,
      headers: { authorization: `Bearer ${dev.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : {}) as T };
  }
  async function project(name: string): Promise<void> {
    const work = path.join(tmp, `${name}-work`);
    makeRepo(work, { 'README.md': `# ${name}: the secret plans\n`, 'svc.yaml': 'svc_version: 2\ndefault_agent: coder\nagents:\n  coder: {}\n' });
    hostRepos[name] = path.join(tmp, `${name}.git`);
    execFileSync('git', ['clone', '-q', '--bare', work, hostRepos[name]!]);
    const manifest = { apiVersion: 'svc.dev/v1alpha1', kind: 'Project', metadata: { name, namespace: 'default' }, spec: { repoUrl: hostRepos[name], defaultBranch: 'main' } };
    await runOk('kubectl', ['apply', '-f', '-'], dev.env, JSON.stringify(manifest));
    projects[name] = (await kubectl('get', 'project', name, '-o', 'jsonpath={.metadata.uid}')).trim();
    await waitFor(`project ${name} Ready`, async () => (await kubectl('get', 'project', name, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')) === 'True', 60_000);
  }
  async function running(name: string): Promise<string> {
    const res = await api<{ session: { id: string } }>('POST', `/projects/${projects[name]}/sessions`, {});
    expect(res.status).toBe(201);
    const id = res.body.session.id;
    await waitFor(`${name}'s session running`, async () => {
      const s = await api<{ session: { status: string } }>('GET', `/projects/${projects[name]}/sessions/${id}`);
      if (s.body.session.status === 'failed') throw new Error(`session failed: ${JSON.stringify(s.body)}\n${dev.output().slice(-3000)}`);
      return s.body.session.status === 'running';
    }, 90_000);
    return id;
  }

  beforeAll(async () => {
    tmp = mkdtempSync(path.join(os.tmpdir(), `svc-attacks-${provider}-`));
    dev = await startDev({ dataDir: path.join(tmp, 'dev'), extraEnv: { SVC_SANDBOX_MAX_PIDS: String(MAX_PIDS) }, args: ['--provider', provider, ...fixtureEngineArgs(attacker)], timeoutMs: 90_000 });
    kubeUrl = /server: "?(https?:\/\/[^"\s]+)/.exec(readFileSync(dev.kubeconfig, 'utf8'))![1]!;
    await project('victim');
    await project('attacker');
    const canary = `victim-canary-${randomBytes(8).toString('hex')}`;
    await kubectl('create', 'secret', 'generic', 'victim-secrets', `--from-literal=CANARY=${canary}`);
    const victim = await running('victim');
    const address = (await kubectl('get', 'sandbox', victim, '-o', 'jsonpath={.status.address}')).trim();
    const victimFile = provider === 'process'
      ? path.join(dev.dataDir, 'sandboxes', 'default', victim, 'workspace', 'README.md')
      : path.join(dev.dataDir, 'node', (await kubectl('get', 'pod', `svc-sandbox-${victim}`, '-o', 'jsonpath={.metadata.uid}')).replace(/-/g, '').slice(0, 12), 'v', 'workspace', 'README.md');
    expect(readFileSync(victimFile, 'utf8')).toContain('secret plans'); // the target is real
    const apiPid = childPid(dev.process.pid!, 'api.js');
    const targets = {
      dataDir: dev.dataDir,
      envFile: path.join(dev.dataDir, 'env'),
      victimFile,
      victimCanaryReversed: [...canary].reverse().join(''),
      victimDaemon: address,
      hostRepo: hostRepos.attacker,
      kubePort: Number(new URL(kubeUrl).port),
      metricsPort: Number(/\[operator\].*health on port (\d+)/.exec(dev.output())![1]),
      pids: [dev.process.pid!, apiPid, childPid(dev.process.pid!, 'operator.js')],
      apiPid,
    };
    await kubectl('create', 'secret', 'generic', 'attacker-secrets', `--from-literal=ATTACK_TARGETS=${JSON.stringify(targets)}`);
    attackerSession = await running('attacker');
    report = await waitFor('the attacker\'s report', async () => {
      const res = await api<Report>('GET', `/projects/${projects.attacker}/sessions/${attackerSession}/engine/fixture/report`);
      return res.status === 200 && res.body.done ? res.body : undefined;
    }, 120_000);
  }, 300_000);

  afterAll(async () => {
    await dev?.stop();
    if (tmp) removeDevDir(tmp);
  }, 60_000);

  it('every attempt to leave the sandbox is blocked', () => {
    expect(report.attempts.filter((a) => !a.blocked)).toEqual([]);
    expect(report.attempts.map((a) => a.name)).toEqual(ATTACKS);
  });

  it('a fork bomb stops at the sandbox\'s task limit (SVC_SANDBOX_MAX_PIDS), and its daemon still answers', () => {
    const forks = report.attempts.find((a) => a.name === 'fork without bound')!;
    const forked = Number(/^forked (\d+) processes$/.exec(forks.detail)?.[1]);
    // the daemon, the engine and the shells hold the rest; the report came through the daemon after it
    expect(forked, forks.detail).toBeGreaterThan(MAX_PIDS / 2);
    expect(forked, forks.detail).toBeLessThan(MAX_PIDS);
  });

  it('svc dev, its API and its operator keep running; the host repository got no ref', async () => {
    expect(dev.process.exitCode).toBeNull();
    for (const script of ['api.js', 'operator.js']) expect(alive(childPid(dev.process.pid!, script))).toBe(true);
    expect((await api('GET', `/projects/${projects.attacker}`)).status).toBe(200);
    expect(() => execFileSync('git', ['--git-dir', hostRepos.attacker!, 'rev-parse', '--verify', '-q', 'refs/heads/attack'], { stdio: 'pipe' })).toThrow();
  });

  it('the agent runs as a non-root uid on the host', () => {
    const engines = readdirSync('/proc').filter((e) => /^\d+$/.test(e)).filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('attacker.js') && readFileSync(`/proc/${pid}/environ`, 'latin1').includes(`SVC_SESSION_ID=${attackerSession}\0`)
          && readlinkSafe(`/proc/${pid}/exe`) === process.execPath;
      } catch { return false; }
    });
    expect(engines.length).toBeGreaterThanOrEqual(1);
    for (const pid of engines) {
      const uid = Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
      expect(uid).not.toBe(0);
    }
  });

  it('the local cluster answers 401 with a Status body without its token, or with a wrong one', async () => {
    const dispatcher = new Agent({ connect: { rejectUnauthorized: false } });
    for (const authorization of ['', 'Bearer not-the-token']) {
      const res = await undiciFetch(`${kubeUrl}/api/v1/namespaces/default/secrets`, { headers: { authorization }, dispatcher });
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
    }
    expect(existsSync(dev.kubeconfig)).toBe(true);
    expect((await kubectl('get', 'secrets', '-o', 'name')).length).toBeGreaterThan(0); // svc dev's kubeconfig carries the token
  });
});

function readlinkSafe(p: string): string {
  try { return execFileSync('readlink', [p], { encoding: 'utf8' }).trim(); } catch { return ''; }
}
