// Local repository URLs (paths, file://) outside `svc dev` (issue 15): the API and the operator
// started as a deployment starts them (no SVC_ALLOW_LOCAL_REPOS) refuse them; `svc dev` sets the
// flag (its tests use local repositories throughout).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PROJECT, getCondition, type Project } from '../../src/resources/index.js';
import { startTestCluster, eventually, projectObject, type TestCluster } from '../kube/cluster.js';
import { adminToken, startApiProcess, startOperatorProcess, writeKubeconfig, type MainProcess } from '../helpers/processes.js';
import { makeRepo } from './util.js';

let cluster: TestCluster;
let api: MainProcess;
let operator: MainProcess;
let token: string;
let tmp: string;

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'svc-local-repos-'));
  makeRepo(path.join(tmp, 'repo'), { 'README.md': 'hi\n' });
  cluster = await startTestCluster();
  const kubeconfig = writeKubeconfig(cluster);
  token = await adminToken(cluster.client());
  [api, operator] = await Promise.all([startApiProcess(kubeconfig), startOperatorProcess(kubeconfig)]);
});
afterAll(async () => {
  await Promise.all([api?.stop(), operator?.stop()]);
  await cluster?.close();
  rmSync(tmp, { recursive: true, force: true });
});

const call = async (method: string, urlPath: string, body?: unknown) => {
  const res = await fetch(`${api.url}/v1${urlPath}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: await res.json() as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
};

describe('without SVC_ALLOW_LOCAL_REPOS', () => {
  it('the API refuses a local path or file:// repo_url with 400 and creates nothing', async () => {
    for (const url of [path.join(tmp, 'repo'), `file://${path.join(tmp, 'repo')}`, 'FILE:///etc']) {
      const res = await call('POST', '/projects', { name: 'local', repo_url: url });
      expect(res.status, url).toBe(400);
      expect(res.body.error).toMatch(/SVC_ALLOW_LOCAL_REPOS=1/);
    }
    expect((await cluster.client().resource<Project>(PROJECT).list('default')).items).toHaveLength(0);
    expect((await call('POST', '/projects', { name: 'remote', repo_url: 'https://git.example/r.git' })).status).toBe(201);
  });

  it('the operator refuses a Project applied with a local path (condition), and the change-request routes answer 400', async () => {
    const created = await cluster.client().resource<Project>(PROJECT).create(projectObject('applied', { repoUrl: path.join(tmp, 'repo') }));
    const reach = await eventually(async () => {
      const p = await cluster.client().resource<Project>(PROJECT).get('default', 'applied');
      return getCondition(p.status?.conditions, 'RepositoryReachable');
    }, 100);
    expect(reach).toMatchObject({ status: 'False', reason: 'LocalRepoNotAllowed' });
    expect(reach.message).toMatch(/SVC_ALLOW_LOCAL_REPOS=1/);
    const cr = await call('POST', `/projects/${created.metadata.uid}/change-requests`, { title: 't', head_ref: 'feature' });
    expect(cr.status).toBe(400);
    expect(cr.body.error).toMatch(/local path/);
  });
});
