import { afterAll, beforeAll } from 'vitest';
/** A local cluster with the svc CRDs installed, for the kube and runtime integration tests. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildCrd } from '../../src/crdgen/crd.js';
import { KubeClient, loadClusterConfig } from '../../src/kube/index.js';
import { adminKubeconfig, startLocalCluster, type LocalCluster, type LocalClusterOptions } from '../../src/localcluster/index.js';
import { CUSTOM_RESOURCE_DEFINITION, KINDS, type KubeObject, type Project } from '../../src/resources/index.js';

export interface TestCluster {
  url: string;
  /** The admin's bearer token and the certificate to trust (every request is authenticated). */
  token: string;
  ca: string;
  dataDir: string;
  client(component?: string): KubeClient;
  /** Stops the API server, keeping its data (an outage). */
  stopServer(): Promise<void>;
  /** Starts it again on the same port and data. */
  startServer(): Promise<void>;
  close(): Promise<void>;
}

export async function startTestCluster(options: Partial<LocalClusterOptions> = {}): Promise<TestCluster> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-kube-test-'));
  let cluster: LocalCluster | undefined = await startLocalCluster({ dataDir, port: 0, ...options });
  const { url, port, token, ca } = cluster;
  const config = loadClusterConfig({ yaml: adminKubeconfig(cluster) });
  const admin = new KubeClient(config, 'test');
  for (const def of KINDS) await admin.resource(CUSTOM_RESOURCE_DEFINITION).create(buildCrd(def) as KubeObject);
  return {
    url,
    token,
    ca,
    dataDir,
    client: (component = 'test') => new KubeClient(config, component),
    async stopServer() {
      await cluster?.close();
      cluster = undefined;
    },
    async startServer() {
      cluster ??= await startLocalCluster({ dataDir, ...options, port });
    },
    async close() {
      await cluster?.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Polls `check` until it returns a value other than undefined (no timing assertions: vitest's timeout bounds it). */
export async function eventually<T>(check: () => T | undefined | Promise<T | undefined>, intervalMs = 20): Promise<T> {
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** A Project in the default namespace on a placeholder repository. */
export function projectObject(name: string, spec: Partial<Project['spec']> = {}): Project {
  return { apiVersion: 'svc.dev/v1alpha1', kind: 'Project', metadata: { name, namespace: 'default' }, spec: { repoUrl: 'file:///tmp/repo.git', defaultBranch: 'main', ...spec } };
}

/** Registers beforeAll/afterAll hooks for one test cluster shared by a file. */
export function useTestCluster(): { readonly cluster: TestCluster; readonly client: KubeClient } {
  let cluster: TestCluster | undefined;
  let client: KubeClient | undefined;
  beforeAll(async () => {
    cluster = await startTestCluster();
    client = cluster.client();
  });
  afterAll(() => cluster?.close());
  return {
    get cluster() {
      return cluster!;
    },
    get client() {
      return client!;
    },
  };
}
