// `svc dev | tee dev.log` whose tee is gone, and `svc dev` whose terminal closed: it still stops
// cleanly, nothing of it left running. Before, the first write after its reader went away exited
// at once (EPIPE, exit 0) and SIGHUP's default action killed it: either way its operator went as
// in a crash and the running session's sandbox (svc-agent, the engine, its jail slot) stayed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fixtureEngineArgs, removeDevDir, startDev, type DevInstance } from '../helpers/dev.js';
import { sessionProcesses } from '../helpers/processes.js';
import { buildArtifacts, cleanupArtifacts } from '../daemon/harness.js';
import { makeRepo, runOk, waitFor } from './util.js';

const SLOTS = '/run/svc-jail/slots';
let tmp: string;
let fixtureEngine: string;
const devs: DevInstance[] = [];

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'svc-reader-gone-'));
  makeRepo(path.join(tmp, 'repo'), { 'README.md': '# example\n' });
  ({ fixtureEngine } = await buildArtifacts());
}, 60_000);

afterAll(async () => {
  for (const dev of devs) await dev.stop();
  removeDevDir(tmp);
  cleanupArtifacts();
});

/** The jail slots (network namespaces) recorded for sandboxes of `dataDir`, warm ones included. */
function slotsOf(dataDir: string): string[] {
  if (!existsSync(SLOTS)) return [];
  return readdirSync(SLOTS).filter((file) => {
    try { return (JSON.parse(readFileSync(path.join(SLOTS, file), 'utf8')) as { owner: string }).owner.startsWith(dataDir); } catch { return false; }
  });
}

/** svc dev with a running session; returns the session's id. */
async function devWithSession(name: string, detached: boolean): Promise<{ dev: DevInstance; session: string }> {
  const dev = await startDev({ dataDir: path.join(tmp, name), args: fixtureEngineArgs(fixtureEngine), detached });
  devs.push(dev);
  const project = { apiVersion: 'svc.dev/v1alpha1', kind: 'Project', metadata: { name: 'example' }, spec: { repoUrl: path.join(tmp, 'repo'), defaultBranch: 'main' } };
  await runOk('kubectl', ['apply', '-f', '-'], dev.env, JSON.stringify(project));
  const projectId = await waitFor('the project reconciled', async () => {
    const [uid, sha] = (await runOk('kubectl', ['get', 'project', 'example', '-o', 'jsonpath={.metadata.uid} {.status.defaultBranchSha}'], dev.env)).trim().split(' ');
    return sha ? uid : undefined;
  }, 60_000);
  const res = await fetch(`${dev.apiUrl}/projects/${projectId}/sessions`, { method: 'POST', headers: { authorization: `Bearer ${dev.token}`, 'content-type': 'application/json' }, body: '{}' });
  expect(res.status).toBe(201);
  const session = ((await res.json()) as { session: { id: string } }).session.id;
  await waitFor('the session running', async () => (await runOk('kubectl', ['get', 'session', session, '-o', 'jsonpath={.status.status}'], dev.env)).trim() === 'running', 60_000);
  expect(sessionProcesses(session).length).toBeGreaterThan(0);
  expect(slotsOf(dev.dataDir).length).toBeGreaterThan(0);
  return { dev, session };
}

async function expectNothingLeft(dev: DevInstance, session: string): Promise<void> {
  // the sandbox's processes and every slot of this svc dev: gone with its clean stop, not later
  expect(sessionProcesses(session)).toEqual([]);
  expect(slotsOf(dev.dataDir)).toEqual([]);
}

describe('svc dev whose output nobody reads any more', () => {
  it('its reader gone (a closed pipe), SIGTERM: a clean stop, exit 0, the running sandbox and every slot gone', async () => {
    const { dev, session } = await devWithSession('pipe', false);
    // as `svc dev | tee dev.log` when tee goes: the pipe's read end closes
    dev.process.stdout!.destroy();
    dev.process.stderr!.destroy();
    // its first line after the signal meets the closed pipe (before: it exited there, at once)
    expect(await dev.stop()).toBe(0);
    await expectNothingLeft(dev, session);
  }, 150_000);

  it('its terminal closed (SIGHUP to svc dev and its group): a clean stop, exit 0, nothing left', async () => {
    const { dev, session } = await devWithSession('hangup', true);
    await dev.killGroup('SIGHUP');
    expect(dev.process.exitCode).toBe(0);
    expect(dev.output()).toContain('svc dev: hung up, stopping...');
    expect(dev.output()).toContain('svc dev: stopped');
    await expectNothingLeft(dev, session);
  }, 150_000);
});
