// The API caches the Secrets it checks session tokens against (the model gateway, the sandbox
// routes) through one label selector. Of a session's Secrets, it must hold those and no other: a
// failed session's kept log is up to 256 KiB and lives as long as the Session (the API held every
// one it ever saw), a kubernetes sandbox's Secret carries the project's secrets, and a CLI
// token's record is not a session token. Checked by listing through a real (local) cluster.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { newToken, tokenSecret } from '../../src/lib/api-tokens.js';
import {
  LABEL_SESSION, SECRET, SESSION_TOKEN_SECRETS, sessionLogSecret, sessionSecret, type KubeObject, type Session,
} from '../../src/resources/index.js';
import { sandboxSecret } from '../../src/sandbox/kubernetes/index.js';
import type { SandboxRequest } from '../../src/sandbox/provider.js';
import { startTestCluster, type TestCluster } from './cluster.js';

let cluster: TestCluster;
beforeAll(async () => { cluster = await startTestCluster(); });
afterAll(async () => { await cluster?.close(); });

it('the session-token selector takes the session Secret and leaves its log, its sandbox\'s Secret and its CLI token\'s record', async () => {
  const id = randomUUID();
  const session = {
    apiVersion: 'svc.dev/v1alpha1', kind: 'Session', metadata: { name: id, namespace: 'default', uid: randomUUID() },
    spec: { projectRef: { name: 'p' }, agent: 'a', baseRef: 'main', desiredState: 'running' },
  } as Session;
  const cli = tokenSecret(newToken(), { userId: randomUUID(), access: 'write', capabilities: [] }, 'default');
  const secrets: KubeObject[] = [
    sessionSecret(session, { sandboxToken: 'sbx', cliToken: 'cli' }),
    sessionLogSecret(session, 'the log of a failed sandbox'),
    sandboxSecret({ name: id, namespace: 'default', uid: randomUUID(), sessionId: id, secretEnv: { PROJECT_SECRET: 'x' } } as unknown as SandboxRequest),
    { ...cli, metadata: { ...cli.metadata, labels: { ...cli.metadata.labels, [LABEL_SESSION]: id } } },
  ];
  const client = cluster.client().resource<KubeObject>(SECRET);
  // without their owners (not made here: the cluster's garbage collector would take them at once)
  for (const secret of secrets) await client.create({ ...secret, metadata: { ...secret.metadata, ownerReferences: undefined } });
  const all = (await client.list('default', { labelSelector: LABEL_SESSION })).items.map((s) => s.metadata.name);
  expect(all).toHaveLength(4);
  const selected = (await client.list('default', { labelSelector: SESSION_TOKEN_SECRETS })).items.map((s) => s.metadata.name);
  expect(selected).toEqual([`svc-session-${id}`]);
});
