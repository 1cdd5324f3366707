/* eslint-disable @typescript-eslint/no-explicit-any -- JSON response bodies, asserted field by field */
// No secret on a command line (the guide's "no secret in argv"; DESIGN §8.1): a command line is
// readable by every user of the machine (`ps`, /proc/PID/cmdline). Nor in a log, an Event, a
// resource or a REST answer about the session. Through `svc dev` with real
// jailed sandboxes, svc-agent and the fixture engine, and as a user and an agent do it: a provider
// key and a project secret set with the CLI (from stdin), a session started, its agent's shell
// committing, pushing through the git gateway, opening a change request with the svc CLI and
// calling the model gateway, then the stop (the checkpoint push). All the while every command line
// of this test's process tree (svc dev, the API, the operator, the sandboxes, every git they run)
// is sampled from /proc. None may hold the admin token, the local cluster's token, the provider
// key, the project secret, the session's sandbox token, CLI token or model key, nor anything shaped
// like an svc token, a clone credential or an HTTP authorization header.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parentPid } from '../../src/lib/proc.js';
import { CLI_TOKEN_KEY, SANDBOX_TOKEN_KEY } from '../../src/resources/session-secret.js';
import { buildArtifacts } from '../daemon/harness.js';
import { startModelServer, type ModelServer } from '../fixtures/model-server.js';
import { callApi, fixtureEngineArgs, REPO_ROOT, startDev, stopDevAndSandboxes, type DevInstance } from '../helpers/dev.js';
import { makeRepo, run, runOk, waitFor } from '../dev/util.js';

const PROVIDER_KEY = `sk-argv-provider-${process.pid}-0123456789abcdef`;
const SECRET_VALUE = `argv-project-secret-${process.pid}-fedcba9876543210`;
/** Shapes of svc's credentials (src/lib/api-tokens.ts, sandbox-token.ts, llm-key.ts) and of a header carrying one. */
const CREDENTIAL_SHAPES: [string, RegExp][] = [
  ['an svc token', /svc_[A-Za-z0-9_-]{43}/],
  ['a sandbox token', /svcsbx\.[0-9a-f-]{36}\.[A-Za-z0-9_-]{43}/],
  ['a model-gateway key', /svcllm\.[0-9a-f-]{36}\.[A-Za-z0-9_-]{43}/],
  ['a clone credential', /\b\d{10}\.[A-Za-z0-9_-]{43}\b/],
  ['an authorization header with its value', /(authorization:|extraheader=)\s*(bearer|basic)\s+[A-Za-z0-9+/=._-]{16,}/i],
];

/** The text around the first credential shape in `text`. */
function shape(text: string): string {
  const at = CREDENTIAL_SHAPES.map(([, re]) => re.exec(text)?.index).find((i) => i !== undefined) ?? 0;
  return text.slice(Math.max(0, at - 120), at + 80);
}

/**
 * Samples the command lines of `root` and every process below it, every `everyMs`, until stop():
 * each distinct command line once. A process's parent is read once, when it is first seen; its
 * command line at every sample (a fork shows its parent's until it execs).
 */
function commandLineSampler(root: number, everyMs = 5) {
  const parentOf = new Map<number, number>();
  const seen = new Set<string>();
  let samples = 0;
  const parent = (pid: number): number => {
    let ppid = parentOf.get(pid);
    if (ppid === undefined) parentOf.set(pid, (ppid = parentPid(pid)));
    return ppid;
  };
  const below = (pid: number): boolean => {
    for (let p = pid, hops = 0; p > 1 && hops < 64; p = parent(p), hops++) if (p === root) return true;
    return false;
  };
  const sample = () => {
    const live = new Set(readdirSync('/proc').filter((e) => /^\d+$/.test(e)).map(Number));
    for (const pid of parentOf.keys()) if (!live.has(pid)) parentOf.delete(pid); // pids are reused
    for (const pid of live) {
      if (pid === root || !below(pid)) continue;
      try { seen.add(readFileSync(`/proc/${pid}/cmdline`, 'latin1').replaceAll('\0', ' ').trim()); } catch { /* gone */ }
    }
    samples++;
  };
  const timer = setInterval(sample, everyMs);
  return {
    stop(): { commandLines: string[]; samples: number } {
      clearInterval(timer);
      sample();
      return { commandLines: [...seen].filter(Boolean), samples };
    },
  };
}

describe('no secret on a command line (svc dev, a session end to end)', () => {
  let dev: DevInstance;
  let model: ModelServer;
  let projectId: string;
  let sampler: ReturnType<typeof commandLineSampler>;
  const svc = (args: string[], input?: string) => run(process.execPath, [path.join(REPO_ROOT, 'bin/svc.js'), ...args], dev.env, input);
  const api = <T = any>(method: string, urlPath: string, body?: unknown) => callApi<T>(dev, method, urlPath, body);

  beforeAll(async () => {
    sampler = commandLineSampler(process.pid);
    model = await startModelServer();
    const { fixtureEngine } = await buildArtifacts();
    dev = await startDev({ args: [...fixtureEngineArgs(fixtureEngine), '--idle-timeout', '30m'], timeoutMs: 90_000 });
    const repo = path.join(dev.dataDir, 'repo');
    makeRepo(repo, { 'svc.yaml': 'svc_version: 2\ndefault_agent: coder\nagents:\n  coder: {}\n' });
    await runOk('kubectl', ['apply', '-f', '-'], dev.env, JSON.stringify({ apiVersion: 'svc.dev/v1alpha1', kind: 'Project', metadata: { name: 'argv' }, spec: { repoUrl: repo, defaultBranch: 'main' } }));
    await runOk('kubectl', ['wait', 'project/argv', '--for=condition=Ready', '--timeout=60s'], dev.env);
    projectId = await runOk('kubectl', ['get', 'project', 'argv', '-o', 'jsonpath={.metadata.uid}'], dev.env);
  }, 150_000);

  afterAll(async () => {
    sampler?.stop();
    await stopDevAndSandboxes(dev);
    await model?.close();
  });

  it('none of svc\'s processes, its sandboxes\' or their git\'s holds a secret in its command line; no log, Event, resource or answer does', async () => {
    expect((await svc(['gateway', 'providers', 'set', 'local', '--base-url', model.url, '--project', 'argv'], `${PROVIDER_KEY}\n`)).code).toBe(0);
    expect((await svc(['secrets', 'set', 'ARGV_SECRET', '--project', 'argv'], `${SECRET_VALUE}\n`)).code).toBe(0);

    const started = await svc(['sessions', 'start', '--project', 'argv', '-q']);
    expect(started.code, started.stderr).toBe(0);
    const id = started.stdout.trim();
    await runOk('kubectl', ['wait', `session/${id}`, '--for=jsonpath={.status.status}=running', '--timeout=60s'], dev.env);
    const env = (await api<Record<string, string>>('GET', `/projects/${projectId}/sessions/${id}/engine/fixture/env`)).body;
    expect(env.SVC_LLM_API_KEY).toMatch(/^svcllm\./);
    expect(env.ARGV_SECRET).toBe(SECRET_VALUE);
    // the Session Secret's tokens are the ones the agent got (read while it exists: the stop deletes it)
    const secret = JSON.parse(await runOk('kubectl', ['get', 'secret', `svc-session-${id}`, '-o', 'json'], dev.env)) as { data: Record<string, string> };
    const decoded = (key: string) => Buffer.from(secret.data[key] ?? '', 'base64').toString('utf8');
    expect([decoded(SANDBOX_TOKEN_KEY), decoded(CLI_TOKEN_KEY)]).toEqual([env.SVC_SANDBOX_TOKEN, env.SVC_CLI_TOKEN]);

    // the agent's shell at work: a commit pushed through the gateway, a change request, a model call
    const llmCall = `fetch(process.env.SVC_LLM_BASE_URL + "/local/chat/completions", { method: "POST", headers: { authorization: "Bearer " + process.env.SVC_LLM_API_KEY, "content-type": "application/json" }, body: JSON.stringify({ model: "m1", messages: [{ role: "user", content: "hi" }] }) }).then((r) => r.text()).then((t) => require("fs").writeFileSync("llm.out", t))`;
    const work = [
      'echo argv > argv.txt && git add argv.txt',
      'git -c user.name=agent -c user.email=agent@example.com commit -qm "argv check"',
      'git push -q origin HEAD',
      'svc cr open --title "argv check" > cr.out 2>&1',
      `node -e '${llmCall}'`,
    ].join(' && ');
    const root = await waitFor('the root engine session', async () => (await runOk('kubectl', ['get', 'session', id, '-o', 'jsonpath={.status.rootSessionId}'], dev.env)) || undefined);
    const prompted = await api('POST', `/projects/${projectId}/sessions/${id}/engine/session/${root}/prompt_async`, { parts: [{ type: 'text', text: `#fixture ${JSON.stringify({ spawn: work, end: true })}` }] });
    expect(prompted.status, prompted.text).toBe(204);
    const crs = await waitFor('the agent\'s change request', async () => {
      const { body } = await api<{ change_requests: { head_ref: string }[] }>('GET', `/projects/${projectId}/change-requests`);
      return body.change_requests?.length ? body.change_requests : undefined;
    }, 30_000);
    expect(crs[0]!.head_ref).toBe(id);
    await waitFor('the agent\'s model call', async () => model.requests.length > 0 || undefined, 30_000);

    const stopped = await svc(['sessions', 'stop', id, '--project', 'argv']);
    expect(stopped.code, stopped.stderr).toBe(0);
    await runOk('kubectl', ['wait', `session/${id}`, '--for=jsonpath={.status.status}=stopped', '--timeout=60s'], dev.env);
    const { commandLines, samples } = sampler.stop();

    const kubeToken = /token: (\S+)/.exec(readFileSync(dev.kubeconfig, 'utf8'))?.[1];
    const exact: [string, string | undefined][] = [
      ['the admin token', dev.token], ['the local cluster\'s token', kubeToken], ['the provider key', PROVIDER_KEY],
      ['the project secret', SECRET_VALUE], ['the session\'s CLI token', env.SVC_CLI_TOKEN], ['the sandbox token', env.SVC_SANDBOX_TOKEN],
      ['the session\'s model key', env.SVC_LLM_API_KEY],
    ];
    for (const [what, value] of exact) expect(value, what).toBeTruthy();
    const leaks = commandLines.flatMap((line) => [
      ...exact.filter(([, value]) => line.includes(value!)).map(([what]) => `${what}: ${line}`),
      ...CREDENTIAL_SHAPES.filter(([, shape]) => shape.test(line)).map(([what]) => `${what}: ${line}`),
    ]);
    expect(leaks).toEqual([]);

    // nor in what svc writes down or answers: its logs (less the admin token svc dev prints for
    // the user who started it), Events, resources, and the REST answers about the session
    const written: [string, string][] = [
      ['svc dev\'s output', dev.output().replaceAll(dev.token, '<admin token>')],
      ...await Promise.all(['events', 'svcdev', 'configmaps', 'leases'].map(async (kind): Promise<[string, string]> => [`kubectl get ${kind}`, await runOk('kubectl', ['get', kind, '-A', '-o', 'json'], dev.env)])),
      ...await Promise.all([`sessions/${id}`, 'sessions', 'gateway/providers', 'gateway/logs', 'gateway/usage?group_by=session', 'secrets', 'change-requests']
        .map(async (route): Promise<[string, string]> => {
          const res = await api('GET', `/projects/${projectId}/${route}`);
          expect(res.status, route).toBe(200);
          return [`GET ${route}`, res.text];
        })),
    ];
    const writtenLeaks = written.flatMap(([where, text]) => [
      ...exact.filter(([, value]) => text.includes(value!)).map(([what]) => `${what} in ${where}`),
      ...CREDENTIAL_SHAPES.filter(([, shape]) => shape.test(text)).map(([what]) => `${what} in ${where}: ${shape(text)}`),
    ]);
    expect(writtenLeaks).toEqual([]);

    // the sampler saw what it had to look at: the jail, svc-agent, git pushing, the agent's CLI
    const saw = (pattern: RegExp) => commandLines.some((line) => pattern.test(line));
    expect({ samples: samples > 100, bwrap: saw(/bwrap/), agent: saw(/svc-agent/), push: saw(/git.* push|receive-pack/), cli: saw(/cr open/) }, commandLines.join('\n'))
      .toEqual({ samples: true, bwrap: true, agent: true, push: true, cli: true });
  }, 180_000);
});
