// svc dev's isolation settings (issue 20 §1, docs/sandboxes.md): --sandbox-mount never shows the
// data directory; where isolation cannot be had, svc dev says what is missing and sessions fail
// saying it too; --unsafe-no-isolation warns loudly on every start.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildArtifacts, cleanupArtifacts } from '../daemon/harness.js';
import { fixtureEngineArgs, REPO_ROOT, removeDevDir, startDev, type DevInstance } from '../helpers/dev.js';
import { sessionProcesses } from '../helpers/processes.js';
import { makeRepo, run, runOk, waitFor } from './util.js';

const SVC = path.join(REPO_ROOT, 'bin/svc.js');
const NOBODY = 65534;
let tmp: string;
let fixtureEngine: string;

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'svc-dev-isolation-'));
  ({ fixtureEngine } = await buildArtifacts());
});
afterAll(() => {
  removeDevDir(tmp);
  cleanupArtifacts();
});

async function api<T>(dev: DevInstance, method: string, urlPath: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(dev.apiUrl + urlPath, {
    method, headers: { authorization: `Bearer ${dev.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as T };
}

/** A project on a repository of this machine, and a started session; resolves with the session's id. */
async function session(dev: DevInstance, dir: string, owner?: number, sandbox?: Record<string, unknown>): Promise<{ projectId: string; id: string }> {
  const repo = path.join(dir, 'repo');
  makeRepo(repo, { 'svc.yaml': 'svc_version: 2\ndefault_agent: coder\nagents:\n  coder: {}\n' });
  if (owner !== undefined) execFileSync('chown', ['-R', `${owner}:${owner}`, repo]); // svc dev's user's own repository
  const manifest = { apiVersion: 'svc.dev/v1alpha1', kind: 'Project', metadata: { name: 'demo', namespace: 'default' }, spec: { repoUrl: repo, defaultBranch: 'main', ...(sandbox ? { sandbox } : {}) } };
  await runOk('kubectl', ['apply', '-f', '-'], dev.env, JSON.stringify(manifest));
  await waitFor('project Ready', async () => (await runOk('kubectl', ['get', 'project', 'demo', '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}'], dev.env)) === 'True', 60_000);
  const projectId = (await runOk('kubectl', ['get', 'project', 'demo', '-o', 'jsonpath={.metadata.uid}'], dev.env)).trim();
  const created = await api<{ session: { id: string } }>(dev, 'POST', `/projects/${projectId}/sessions`, {});
  expect(created.status).toBe(201);
  return { projectId, id: created.body.session.id };
}

describe('svc dev --sandbox-mount', () => {
  it('refuses the data directory, a folder inside or around it, and a missing path, before starting anything', async () => {
    const dataDir = path.join(tmp, 'refusals', 'dev');
    for (const [mount, says] of [
      [dataDir, "svc's data directory"], [path.join(dataDir, 'sandboxes'), "svc's data directory"], [`${path.dirname(dataDir)}:rw`, "svc's data directory"],
      ['/', "svc's data directory"], ['/no/such/path', 'no such file or directory'],
    ] as const) {
      const r = await run(process.execPath, [SVC, 'dev', '--data-dir', dataDir, '--api-port', '0', '--kube-port', '0', '--sandbox-mount', mount]);
      expect(r.code, mount).not.toBe(0);
      expect(r.stderr, mount).toContain('svc dev could not start: --sandbox-mount');
      expect(r.stderr, mount).toContain(says);
      expect(r.stdout).not.toContain('svc dev is running');
    }
  });
});

describe("svc dev's jail settings from its environment", () => {
  const SUBNET = '10.214.0.0/16';
  afterAll(() => {
    // the gateway address and route this range left on the host (svc keeps them for its next start)
    for (const args of [['addr', 'del', '10.214.255.254/32', 'dev', 'lo'], ['route', 'del', 'unreachable', SUBNET]]) {
      try { execFileSync('ip', args, { stdio: 'ignore' }); } catch { /* not there */ }
    }
  });

  it('refuses a task limit it cannot use before starting anything', async () => {
    const dataDir = path.join(tmp, 'bad-max-pids', 'dev');
    for (const value of ['abc', '10']) {
      const r = await run(process.execPath, [SVC, 'dev', '--data-dir', dataDir, '--api-port', '0', '--kube-port', '0'], { ...process.env, SVC_SANDBOX_MAX_PIDS: value });
      expect(r.code, value).not.toBe(0);
      expect(r.stderr, value).toContain(`svc dev could not start: SVC_SANDBOX_MAX_PIDS must be an integer >= 64, got "${value}"`);
      expect(r.stdout).not.toContain('svc dev is running');
    }
  });

  it('SVC_SANDBOX_SUBNET, SVC_SANDBOX_MAX_PIDS and the sizes reach the sandboxes of the process provider: it runs in that range, bounded to that many tasks, in a control group of its template\'s memory and the default CPU', async () => {
    const dir = path.join(tmp, 'jail-settings');
    const dev = await startDev({
      dataDir: path.join(dir, 'dev'), extraEnv: { SVC_SANDBOX_SUBNET: SUBNET, SVC_SANDBOX_MAX_PIDS: '128', SVC_SANDBOX_CPU: '2', SVC_SANDBOX_MEMORY_MIB: '1536' },
      args: fixtureEngineArgs(fixtureEngine), timeoutMs: 90_000,
    });
    try {
      expect(dev.sandboxApiUrl).toContain('10.214.255.254');
      expect(dev.output()).toMatch(/svc dev: sandboxes have at most 128 tasks each, a fair share of the CPU, the memory their template gives \(cgroup v[12]\)/);
      const { id } = await session(dev, dir, undefined, { memory: 1024 });
      // running: the sandbox reached the API at the range's gateway (the operator's jail and the API agree)
      await waitFor('the session running', async () => (await runOk('kubectl', ['get', 'session', id, '-o', 'jsonpath={.status.status}'], dev.env)) === 'running', 90_000);
      expect((await runOk('kubectl', ['get', 'sandbox', id, '-o', 'jsonpath={.status.address}'], dev.env)).trim()).toMatch(/^10\.214\.\d+\.\d+:\d+$/);
      const agents = sessionProcesses(id);
      expect(agents.length).toBeGreaterThan(0);
      for (const pid of agents) expect(readFileSync(`/proc/${pid}/limits`, 'utf8')).toMatch(/^Max processes\s+128\s+128\s/m);
      // its group: the template's 1024 MiB (not the default's 1536), the default's two cores
      const v1 = existsSync('/sys/fs/cgroup/memory/cgroup.procs');
      const group = (controller: string) => {
        const parent = v1 ? `/sys/fs/cgroup/${controller}/svc-sandboxes` : '/sys/fs/cgroup/svc-sandboxes';
        const name = readdirSync(parent).find((g) => existsSync(`${parent}/${g}/cgroup.procs`) && readFileSync(`${parent}/${g}/cgroup.procs`, 'utf8').split('\n').includes(String(agents[0])));
        return path.join(parent, name ?? 'none');
      };
      expect(group('memory')).toMatch(/svc-sandboxes\/svcj-\d+$/);
      expect(readFileSync(path.join(group('memory'), v1 ? 'memory.limit_in_bytes' : 'memory.max'), 'utf8').trim()).toBe(String(1024 * 2 ** 20));
      expect(readFileSync(path.join(group('cpu'), v1 ? 'cpu.cfs_quota_us' : 'cpu.max'), 'utf8').trim()).toMatch(/^200000( 100000)?$/);
    } finally {
      await dev.stop();
    }
  }, 180_000);
});

describe('svc dev where sandboxes cannot be isolated (not root)', () => {
  let dev: DevInstance;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'svc-dev-nobody-'));
    chownSync(dir, NOBODY, NOBODY);
    dev = await startDev({ dataDir: path.join(dir, 'dev'), uid: NOBODY, extraEnv: { HOME: dir }, args: fixtureEngineArgs(fixtureEngine), timeoutMs: 90_000 });
  }, 120_000);
  afterAll(async () => {
    await dev?.stop();
    removeDevDir(dir);
  });

  it('says what is missing at start, and a session fails with IsolationUnavailable saying it too', async () => {
    expect(dev.output()).toContain('svc dev: ERROR: sandboxes cannot be isolated on this machine: sandbox isolation needs root');
    expect(dev.output()).toContain('--unsafe-no-isolation');
    const { projectId, id } = await session(dev, dir, NOBODY);
    const failed = await waitFor('the session failed', async () => {
      const s = await api<{ session: { status: string; reason: string | null } }>(dev, 'GET', `/projects/${projectId}/sessions/${id}`);
      return s.body.session.status === 'failed' ? s.body.session : undefined;
    }, 60_000);
    expect(failed.reason).toBe('IsolationUnavailable');
    const conditions = await runOk('kubectl', ['get', 'session', id, '-o', 'jsonpath={.status.conditions}'], dev.env);
    expect(conditions).toContain('sandbox isolation needs root');
    expect(readFileSync(path.join(dev.dataDir, 'env'), 'utf8')).toContain('SVC_CLI_TOKEN'); // svc dev itself runs
  }, 120_000);
});

describe('svc dev --provider kubernetes where pods cannot be isolated (not root)', () => {
  let dev: DevInstance;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'svc-dev-nobody-k8s-'));
    chownSync(dir, NOBODY, NOBODY);
    dev = await startDev({ dataDir: path.join(dir, 'dev'), uid: NOBODY, extraEnv: { HOME: dir }, args: ['--provider', 'kubernetes', ...fixtureEngineArgs(fixtureEngine)], timeoutMs: 90_000 });
  }, 120_000);
  afterAll(async () => {
    await dev?.stop();
    removeDevDir(dir);
  });

  it('the node simulator refuses to run the pod unjailed: the session fails saying what is missing', async () => {
    const { projectId, id } = await session(dev, dir, NOBODY);
    const failed = await waitFor('the session failed', async () => {
      const s = await api<{ session: { status: string; reason: string | null } }>(dev, 'GET', `/projects/${projectId}/sessions/${id}`);
      return s.body.session.status === 'failed' ? s.body.session : undefined;
    }, 60_000);
    expect(failed.reason).toBe('CreateContainerError');
    const conditions = await runOk('kubectl', ['get', 'session', id, '-o', 'jsonpath={.status.conditions}'], dev.env);
    expect(conditions).toContain('cannot be isolated');
    expect(conditions).toContain('sandbox isolation needs root');
  }, 120_000);
});

describe('svc dev --unsafe-no-isolation', () => {
  it('warns loudly on every start, and runs sandboxes with the host\'s view (127.0.0.1), under a data directory of any length and name', async () => {
    // longer than a unix socket path may be: svc-agent's credential socket used to collide there;
    // a space and a quote: `source DIR/env` broke on them
    const dataDir = path.join(tmp, 'unsafe', "a data directory's long name".repeat(3), 'dev');
    expect(Buffer.byteLength(path.join(dataDir, 'sandboxes', 'default', randomUUID(), 'home', '.svc-agent', 'git-credential.sock'))).toBeGreaterThan(107);
    let dev = await startDev({ dataDir, args: ['--unsafe-no-isolation', ...fixtureEngineArgs(fixtureEngine)] });
    try {
      expect(dev.output().match(/WARNING: svc dev --unsafe-no-isolation: sandboxes are NOT isolated/g)?.length).toBeGreaterThanOrEqual(2);
      // the line svc dev prints for it, run as written
      const source = /^ {2}(source .*)$/m.exec(dev.output())![1]!;
      expect(await runOk('bash', ['-c', `${source} && printf %s "$KUBECONFIG"`])).toBe(path.join(dataDir, 'kubeconfig'));
      const { id } = await session(dev, path.dirname(dataDir));
      const address = await waitFor('the sandbox address', async () => (await runOk('kubectl', ['get', 'sandbox', id, '-o', 'jsonpath={.status.address}'], dev.env)).trim() || undefined, 60_000);
      expect(address).toMatch(/^127\.0\.0\.1:\d+$/);
      // running: cloned through the git gateway with the credential its socket served
      await waitFor('the session running', async () => (await runOk('kubectl', ['get', 'session', id, '-o', 'jsonpath={.status.status}'], dev.env)) === 'running', 60_000);
      await dev.stop();
      dev = await startDev({ dataDir, args: ['--unsafe-no-isolation', ...fixtureEngineArgs(fixtureEngine)] });
      expect(dev.output()).toContain('WARNING: svc dev --unsafe-no-isolation: sandboxes are NOT isolated');
    } finally {
      await dev.stop();
    }
  }, 180_000);
});
