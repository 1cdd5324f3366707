// Issue 24 §5 "Restarts lose nothing", through `svc dev` (the built CLI, jailed sandboxes, the
// git gateway, the fixture engine): `kill -9` of svc dev's whole process group while sessions
// start, then svc dev again on the same data directory. Every session reaches `running` (none
// fails for the crash: svc-agent retries its clone while the API is down), each has exactly one
// sandbox (the restarted operator adopts what the crashed one started) whose engine took the
// session's initial prompt exactly once, and a clean stop of svc dev leaves nothing behind: no
// process of its sandboxes, no jail slot, no network namespace.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { buildArtifacts, freePort, readUserPrompts } from '../daemon/harness.js';
import { removeDevDir, startDev, type DevInstance } from '../helpers/dev.js';
import { makeRepo, runOk, waitFor } from '../dev/util.js';
import { isRunning, parentPid } from '../../src/lib/proc.js';

const SLOT_DIR = '/run/svc-jail/slots';

let dev: DevInstance;
let dataDir: string;
let devArgs: string[];
let projectId: string;
const started: string[] = [];
const promptOf = new Map<string, string>();

interface SessionView { id: string; status: string; reason: string | null }

async function api<T>(method: string, urlPath: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${dev.apiUrl}${urlPath}`, {
    method,
    headers: { authorization: `Bearer ${dev.token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
    // Crash recovery is the subject here, not latency (bench/sessions measures that): thirty
    // starts at once on a loaded 2-core CI machine may each take several seconds to answer.
    signal: AbortSignal.timeout(60_000),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as T };
}

async function startSessions(count: number): Promise<string[]> {
  return Promise.all(Array.from({ length: count }, async (_, i) => {
    const prompt = `#fixture ${JSON.stringify({ end: true, echo: `session ${i}` })}`;
    const res = await api<{ session: SessionView }>('POST', `/projects/${projectId}/sessions`, { prompt });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    started.push(res.body.session.id);
    promptOf.set(res.body.session.id, prompt);
    return res.body.session.id;
  }));
}

async function sessions(): Promise<Map<string, SessionView>> {
  const res = await api<{ sessions: SessionView[] }>('GET', `/projects/${projectId}/sessions?status=all`);
  return new Map(res.body.sessions.map((s) => [s.id, s]));
}

/** Every session `running`; fails at once (with the reasons) when one failed. */
async function allRunning(ids: string[], timeoutMs: number): Promise<void> {
  let last = new Map<string, SessionView>();
  try {
    const outcome = await waitFor(`${ids.length} sessions running`, async () => {
      last = await sessions();
      if (ids.some((id) => last.get(id)?.status === 'failed')) return 'failed';
      return ids.every((id) => last.get(id)?.status === 'running') || undefined;
    }, timeoutMs);
    if (outcome === 'failed') throw new Error('a session failed');
  } catch (error) {
    const states = ids.map((id) => `${id} ${last.get(id)?.status ?? '?'} ${last.get(id)?.reason ?? ''}`).join('\n');
    const failedId = ids.find((id) => last.get(id)?.status === 'failed');
    const why = failedId ? await runOk('kubectl', ['get', 'session', failedId, '-o', 'jsonpath={.status.conditions}'], dev.env).catch(String) : '';
    throw new Error(`${(error as Error).message}\n${states}\n--- ${failedId} ---\n${why}\n--- svc dev ---\n${dev.output().slice(-3000)}`);
  }
}

function pids(): number[] {
  return readdirSync('/proc').filter((e) => /^\d+$/.test(e)).map(Number).filter((pid) => pid !== process.pid);
}

function environ(pid: number): string {
  try { return readFileSync(`/proc/${pid}/environ`, 'latin1'); } catch { return ''; }
}

/** A process as a failure shows it: its state, parent, start (clock ticks), network namespace and command. */
function describeProcess(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').slice(0, 200);
    return `${pid} state ${stat[0]} ppid ${stat[1]} started ${stat[19]} ${readlinkSync(`/proc/${pid}/ns/net`)} ${command}`;
  } catch { return `${pid} gone`; }
}

/**
 * svc-agent processes (node running bin/svc-agent.js, not the jail's launchers) per session id.
 * Not a child of one: a process svc-agent is starting (git, the credential helper) carries its
 * command line until it execs, and under load a look catches one (ppid the agent, state R).
 */
function agentsBySession(): Map<string, number[]> {
  const found = new Map<string, number[]>();
  const agents = new Set<number>();
  for (const pid of pids()) {
    let exe: string;
    let cmdline: string;
    try {
      exe = path.basename(readlinkSync(`/proc/${pid}/exe`));
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch { continue; }
    // (the fixture engine's path holds "svc-agent" too: node_modules/.cache/svc-agent-test)
    const script = cmdline.split('\0')[1] ?? '';
    if (exe !== 'node' || !/bin\/svc-agent\.js$|daemon\/main\.js$/.test(script) || !isRunning(pid)) continue;
    const id = /(?:^|\0)SVC_SESSION_ID=([^\0]*)/.exec(environ(pid))?.[1];
    if (id) { found.set(id, [...(found.get(id) ?? []), pid]); agents.add(pid); }
  }
  for (const [id, pidsOf] of found) found.set(id, pidsOf.filter((pid) => !agents.has(parentPid(pid))));
  return found;
}

/** The user messages in each session's engine store (the fixture engine's, in the sandbox's engine home). */
function promptsTaken(ids: string[]): Record<string, string[]> {
  return Object.fromEntries(ids.map((id) => [id, readUserPrompts(path.join(dataDir, 'sandboxes', 'default', id, 'home'))]));
}

/** Each session's engine took its initial prompt, once (it goes out just after `running`). */
async function expectPromptTakenOnce(ids: string[]): Promise<void> {
  const expected = Object.fromEntries(ids.map((id) => [id, [promptOf.get(id)!]]));
  await waitFor('every initial prompt taken', async () => isDeepStrictEqual(promptsTaken(ids), expected) || undefined, 30_000).catch(() => undefined);
  expect(promptsTaken(ids)).toEqual(expected);
}

function expectOneSandboxEach(ids: string[]): void {
  const agents = agentsBySession();
  const counts = Object.fromEntries(ids.map((id) => [id, agents.get(id)?.length ?? 0]));
  const several = ids.filter((id) => (agents.get(id)?.length ?? 0) > 1).map((id) => `${id}: ${agents.get(id)!.map(describeProcess).join('; ')}`);
  expect(counts, several.join('\n')).toEqual(Object.fromEntries(ids.map((id) => [id, 1])));
}

/** What is left of this svc dev: processes carrying its data dir or a session id, its slots and their namespaces. */
function leftovers(slots: number[]): { processes: string[]; slots: number[]; namespaces: string[] } {
  const owner = path.join(dataDir, 'sandboxes');
  const marks = [dataDir, ...started.map((id) => `SVC_SESSION_ID=${id}\0`)];
  const processes = pids().filter((pid) => isRunning(pid) && marks.some((m) => environ(pid).includes(m))).map(describeProcess);
  const records = ownSlots(owner);
  // a namespace of one of its slots still there, unless another svc dev (a parallel test) holds that slot now
  const namespaces = slots.filter((n) => existsSync(`/run/netns/svcj-${n}`) && slotOwner(n) === undefined).map((n) => `svcj-${n}`);
  return { processes, slots: records, namespaces };
}

function slotOwner(index: number): string | undefined {
  try { return (JSON.parse(readFileSync(path.join(SLOT_DIR, `${index}.json`), 'utf8')) as { owner: string }).owner; } catch { return undefined; }
}

/** The slots of `owner` that sessions' sandboxes hold (not the warm ones, made ahead of any session). */
function sessionSlots(owner: string): number[] {
  return ownSlots(owner).filter((n) => {
    try { return !(JSON.parse(readFileSync(path.join(SLOT_DIR, `${n}.json`), 'utf8')) as { key: string }).key.startsWith('.warm/'); } catch { return false; }
  });
}

function ownSlots(owner: string): number[] {
  const names = existsSync(SLOT_DIR) ? readdirSync(SLOT_DIR) : [];
  return names.map((n) => Number(/^(\d+)\.json$/.exec(n)?.[1])).filter((n) => Number.isInteger(n) && slotOwner(n) === owner);
}

/** kill -9 of svc dev, its API and its operator (its process group), then svc dev again on the same data dir. */
async function crashAndRestart(): Promise<void> {
  await dev.killGroup('SIGKILL');
  dev = await startDev({ dataDir, args: devArgs, detached: true, timeoutMs: 90_000 });
}

beforeAll(async () => {
  const { fixtureEngine } = await buildArtifacts();
  // the same API port across restarts: a sandbox keeps the API URL it started with (docs/sessions.md)
  const apiPort = await freePort();
  devArgs = ['--engine-command', `'${process.execPath}' '${fixtureEngine}' --port {port}`, '--sandbox-mount', path.dirname(fixtureEngine),
    '--max-sessions', '50', '--api-port', String(apiPort)];
  // short: the daemon's credential socket lies below it
  dataDir = mkdtempSync('/tmp/cr');
  dev = await startDev({ dataDir, args: devArgs, detached: true });
  const repo = path.join(dataDir, 'repo');
  makeRepo(repo, { 'README.md': '# crash\n' });
  const project = { apiVersion: 'svc.dev/v1alpha1', kind: 'Project', metadata: { name: 'crash' }, spec: { repoUrl: repo, defaultBranch: 'main' } };
  await runOk('kubectl', ['apply', '-f', '-'], dev.env, JSON.stringify(project));
  projectId = await waitFor('the project', async () => (await runOk('kubectl', ['get', 'project', 'crash', '-o', 'jsonpath={.metadata.uid}'], dev.env)).trim() || undefined);
}, 120_000);

afterAll(async () => {
  await dev?.stop();
  if (!dataDir) return;
  // whatever a failed test left: sandboxes outlive a kill -9 of svc dev
  for (const pid of pids()) if (started.some((id) => environ(pid).includes(`SVC_SESSION_ID=${id}\0`))) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
  if (!process.env.KEEP_DEV_DIR) removeDevDir(dataDir);
});

describe('kill -9 of svc dev while sessions start', () => {
  it('2 s after 10 sessions were started: all run after the restart, one sandbox each', async () => {
    const ids = await startSessions(10);
    await new Promise((r) => setTimeout(r, 2000));
    await crashAndRestart();
    await allRunning(ids, 120_000);
    expectOneSandboxEach(ids);
    await expectPromptTakenOnce(ids);
  }, 240_000);

  it('while 30 are starting: all run after the restart, one sandbox each', async () => {
    const ids = await startSessions(30);
    await crashAndRestart();
    await allRunning(ids, 200_000);
    expectOneSandboxEach(started);
    await expectPromptTakenOnce(ids);
  }, 300_000);

  it('stopped cleanly right after a crash and restart (before the new operator leads): nothing is left', async () => {
    expect(sessionSlots(path.join(dataDir, 'sandboxes')).length).toBe(started.length);
    const slots = ownSlots(path.join(dataDir, 'sandboxes'));
    await crashAndRestart();
    expect(dev.output()).not.toContain(': leading'); // the crashed operator's Lease has not run out yet
    const code = await dev.stop();
    expect(code, `svc dev's exit (signal ${dev.process.signalCode}):\n${dev.output().slice(-3000)}`).toBe(0);
    expect(leftovers(slots)).toEqual({ processes: [], slots: [], namespaces: [] });
  }, 180_000);
});
