import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { adminKubeconfig } from '../../src/localcluster/index.js';
import { PROJECT, type Project } from '../../src/resources/index.js';
import { eventually, projectObject, startTestCluster, type TestCluster } from '../kube/cluster.js';

const OPERATOR = path.resolve('test/runtime/fixtures/operator.ts');

let cluster: TestCluster;
let kubeconfig: string;
const children: ChildProcess[] = [];
beforeAll(async () => {
  cluster = await startTestCluster();
  kubeconfig = path.join(cluster.dataDir, 'kubeconfig');
  writeFileSync(kubeconfig, adminKubeconfig(cluster), { mode: 0o600 });
});
afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  await cluster?.close();
});

function operator(identity: string) {
  // One process (node with tsx's loader), so that SIGKILL really kills the operator.
  const child = spawn(process.execPath, ['--import', 'tsx', OPERATOR, kubeconfig, identity], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return { child, said: (line: string) => output.split('\n').includes(line) };
}

async function readyMessage(name: string): Promise<string | undefined> {
  const p = await cluster.client().resource<Project>(PROJECT).find('default', name);
  return p?.status?.conditions?.find((c) => c.type === 'Ready')?.message;
}

it('two operator processes: one reconciles; after kill -9 of it the other takes over', async () => {
  const first = operator('first');
  await eventually(() => (first.said('leading') ? true : undefined));
  const second = operator('second');
  await eventually(() => (second.said('started') ? true : undefined));

  const projects = cluster.client().resource<Project>(PROJECT);
  await projects.create(projectObject('one'));
  expect(await eventually(() => readyMessage('one'))).toBe('first');
  expect(second.said('leading')).toBe(false);

  first.child.kill('SIGKILL');
  await eventually(() => (second.said('leading') ? true : undefined));
  await projects.create(projectObject('two'));
  expect(await eventually(() => readyMessage('two'))).toBe('second');
});
