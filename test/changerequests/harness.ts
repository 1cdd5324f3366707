/* eslint-disable @typescript-eslint/no-explicit-any -- JSON response bodies, asserted field by field */
// The API as `svc dev` serves it, in-process: the local cluster with the svc CRDs, token
// Secrets, createApp with the kube-backed project store and change-request service, on a
// loopback port, and the operator's ChangeRequest controller beside it. Plus real git hosts (test/git/fixtures.ts) and Projects pointing at them.
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Agent, fetch } from 'undici';
import { changeRequestController } from '../../controllers/changerequest/controller.js';
import { createApp } from '../../src/api/app.js';
import { Manager } from '../../src/runtime/index.js';
import { ChangeRequestService, kubeChangeRequestStore } from '../../src/api/change-requests/index.js';
import { GitGatewayService, kubeGitGatewayStore } from '../../src/api/git/index.js';
import { ProjectSecretsService, kubeProjectSecretsStore } from '../../src/api/secrets/index.js';
import { kubeProjectStore, kubeTokenSecretReader } from '../../src/api/kube-store.js';
import { mintToken, secretTokenVerifier, type TokenGrant } from '../../src/api/tokens.js';
import type { KubeClient } from '../../src/kube/index.js';
import { API_VERSION, PROJECT, SECRET, type KubeObject, type Project } from '../../src/resources/index.js';
import { startTestCluster, type TestCluster } from '../kube/cluster.js';

export const NAMESPACE = 'default';
export const MERGE_IDENTITY = { name: 'svc merge bot', email: 'noreply@svc.test' };

export interface ApiResponse<T = Record<string, any>> { status: number; body: T }

export interface Harness {
  cluster: TestCluster;
  client: KubeClient;
  /** http://127.0.0.1:PORT/v1 */
  apiUrl: string;
  /** The API's mirrors (SVC_MIRROR_DIR): the change-request routes' and the git gateway's. */
  mirrorDir: string;
  /** Tokens by role: admin (write, every capability), reader, writer (write, no capability),
   *  pusher (write + project.gitops.push), otherProject (admin of another project only). */
  tokens: Record<'admin' | 'reader' | 'writer' | 'pusher' | 'otherProject', string>;
  userId: string;
  call<T = Record<string, any>>(token: string, method: string, urlPath: string, body?: unknown, raw?: string): Promise<ApiResponse<T>>;
  /** A Project (as a GitOps pipeline applies it) backed by `repoUrl`; returns it with its uid. */
  project(name: string, repoUrl: string, defaultBranch?: string): Promise<Project>;
  close(): Promise<void>;
}

/**
 * `fetchMaxAgeMs`: 0 by default (every read fetches); undefined = the service default.
 * `maxPushBytes`: the git gateway's push limit (SVC_GIT_MAX_PUSH_BYTES), default 512 MiB.
 */
export async function startHarness(options: { fetchMaxAgeMs?: number; maxPushBytes?: number } = { fetchMaxAgeMs: 0 }): Promise<Harness> {
  const cluster = await startTestCluster();
  const client = cluster.client('svc-api');
  const mirrorDir = mkdtempSync(path.join(os.tmpdir(), 'svc-cr-mirrors-'));
  const userId = randomUUID();
  const grant = async (g: Omit<TokenGrant, 'userId'>) => {
    const { token, secret } = mintToken({ userId, ...g }, NAMESPACE);
    await client.resource(SECRET).create(secret as unknown as KubeObject);
    return token;
  };
  const tokens = {
    admin: await grant({ access: 'write', capabilities: ['*'] }),
    reader: await grant({ access: 'read', capabilities: [] }),
    writer: await grant({ access: 'write', capabilities: [] }),
    pusher: await grant({ access: 'write', capabilities: ['project.gitops.push'] }),
    otherProject: await grant({ access: 'write', capabilities: ['*'], projectUid: randomUUID() }),
  };
  // The operator's side of change requests (claims left by a dead merger, deleted origins, feedback), in-process.
  const operatorMirrors = mkdtempSync(path.join(os.tmpdir(), 'svc-cr-operator-mirrors-'));
  const manager = new Manager({ client: cluster.client('svc-operator'), leaderElection: false });
  manager.add(changeRequestController({ mirrorDir: operatorMirrors, replicaNamespace: NAMESPACE }));
  await manager.start();
  const projects = kubeProjectStore(client, NAMESPACE);
  const service = new ChangeRequestService({ store: kubeChangeRequestStore(client), mirrorDir, mergeIdentity: MERGE_IDENTITY, fetchMaxAgeMs: options.fetchMaxAgeMs });
  const app = createApp({
    projects,
    changeRequests: service,
    secrets: new ProjectSecretsService(kubeProjectSecretsStore(client)),
    gitGateway: new GitGatewayService({ store: kubeGitGatewayStore(client), mirrorDir, maxPushBytes: options.maxPushBytes }),
    verifyToken: secretTokenVerifier(kubeTokenSecretReader(client, NAMESPACE)),
    isReady: () => true,
    config: { projectNamespace: NAMESPACE },
    log: () => undefined,
  });
  const server: Server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;

  // a connection per call: the tests' git fixtures run synchronously in this process, and a
  // keep-alive connection the server closed while they blocked the loop was reset when reused
  const oneShot = new Agent({ pipelining: 0 });
  return {
    cluster, client, apiUrl, mirrorDir, tokens, userId,
    async call(token, method, urlPath, body, raw) {
      const headers: Record<string, string> = { authorization: `Bearer ${token}` };
      if (body !== undefined || raw !== undefined) headers['content-type'] = 'application/json';
      const res = await fetch(apiUrl + urlPath, { method, headers, body: raw ?? (body === undefined ? undefined : JSON.stringify(body)), dispatcher: oneShot });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : {} };
    },
    async project(name, repoUrl, defaultBranch = 'main') {
      return client.resource<Project>(PROJECT).create({
        apiVersion: API_VERSION, kind: PROJECT.kind, metadata: { name, namespace: NAMESPACE }, spec: { repoUrl, defaultBranch },
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await manager.stop();
      await cluster.close();
      rmSync(mirrorDir, { recursive: true, force: true });
      rmSync(operatorMirrors, { recursive: true, force: true });
    },
  };
}
