import { describe, expect, it } from 'vitest';
import { KubeClient, KubeError, loadClusterConfig } from '../../src/kube/index.js';
import { adminKubeconfig } from '../../src/localcluster/index.js';
import { EVENT, LEASE, PROJECT, SECRET, type KubeObject, type Project } from '../../src/resources/index.js';
import { projectObject as project, useTestCluster } from './cluster.js';

const env = useTestCluster();

async function reasonOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'none';
  } catch (err) {
    expect(err).toBeInstanceOf(KubeError);
    return (err as KubeError).reason;
  }
}

describe('kube client against the local cluster', () => {
  it('creates, reads (with schema defaults), merge-patches, writes status and deletes a custom resource', async () => {
    const projects = env.client.resource<Project>(PROJECT);
    const created = await projects.create({ ...project('alpha'), spec: { repoUrl: 'file:///tmp/a.git' } as Project['spec'] });
    expect(created.metadata.uid).toBeTruthy();
    expect((await projects.get('default', 'alpha')).spec.defaultBranch).toBe('main');

    const patched = await projects.mergePatch('default', 'alpha', { spec: { description: 'hello' } });
    expect(patched.spec.description).toBe('hello');

    const withStatus = await projects.mergePatchStatus('default', 'alpha', { status: { defaultBranchSha: 'abc' } });
    expect(withStatus.status?.defaultBranchSha).toBe('abc');
    const replaced = await projects.replaceStatus({ ...withStatus, status: { ...withStatus.status, lastChangeRequestNumber: 4 } });
    expect(replaced.status?.lastChangeRequestNumber).toBe(4);
    expect(replaced.spec.description).toBe('hello');

    const listed = await projects.list('default');
    expect(listed.items.map((p) => p.metadata.name)).toContain('alpha');
    expect(listed.resourceVersion).not.toBe('');

    await projects.delete('default', 'alpha');
    expect(await projects.find('default', 'alpha')).toBeUndefined();
  });

  it('classifies errors: NotFound, AlreadyExists, Conflict on a stale write, Invalid', async () => {
    const projects = env.client.resource<Project>(PROJECT);
    expect(await reasonOf(projects.get('default', 'missing'))).toBe('NotFound');
    const first = await projects.create(project('beta'));
    expect(await reasonOf(projects.create(project('beta')))).toBe('AlreadyExists');
    await projects.mergePatch('default', 'beta', { spec: { description: 'newer' } });
    expect(await reasonOf(projects.replace({ ...first, spec: { ...first.spec, description: 'stale' } }))).toBe('Conflict');
    expect(await reasonOf(projects.replaceStatus({ ...first, status: { lastChangeRequestNumber: 9 } }))).toBe('Conflict');
    expect((await projects.get('default', 'beta')).spec.description).toBe('newer');
    expect(await reasonOf(projects.create({ ...project('gamma'), spec: { defaultBranch: 'main' } as Project['spec'] }))).toBe('Invalid');
    expect(await projects.find('default', 'gamma')).toBeUndefined();
  });

  it('handles the built-ins svc uses: Secrets, Leases and Events', async () => {
    const secrets = env.client.resource(SECRET);
    await secrets.create({ metadata: { name: 'creds', namespace: 'default' }, data: { token: Buffer.from('s3cret').toString('base64') } });
    expect((await secrets.get('default', 'creds')).data).toEqual({ token: Buffer.from('s3cret').toString('base64') });

    const leases = env.client.resource(LEASE);
    const lease = await leases.create({ metadata: { name: 'l', namespace: 'default' }, spec: { holderIdentity: 'a' } });
    expect((lease as KubeObject & { spec: { holderIdentity: string } }).spec.holderIdentity).toBe('a');

    const owner = await env.client.resource<Project>(PROJECT).create(project('delta'));
    await env.client.recordEvent(owner, { type: 'Warning', reason: 'RepositoryUnreachable', message: 'could not fetch' });
    const events = await env.client.resource<KubeObject & { reason: string; involvedObject: { uid: string } }>(EVENT).list('default');
    const mine = events.items.filter((e) => e.involvedObject.uid === owner.metadata.uid);
    expect(mine.map((e) => e.reason)).toEqual(['RepositoryUnreachable']);
  });

  it('reads the kubeconfig once for many requests, and again at once when the API server answers 401', async () => {
    const { url, token, ca } = env.cluster;
    const config = loadClusterConfig({ yaml: adminKubeconfig({ url, token, ca }) });
    let reads = 0;
    const apply = config.kc.applyToHTTPSOptions.bind(config.kc);
    config.kc.applyToHTTPSOptions = (options) => { reads++; return apply(options); };
    const client = new KubeClient(config, 'test');
    const projects = client.resource<Project>(PROJECT);
    for (let i = 0; i < 20; i++) await projects.list('default');
    // client-node reads the CA, the certificate and the token files and makes an Agent on each call
    expect(reads).toBe(1);

    // the credentials change (a rotated token): a request with the ones read before is refused,
    // and sent again with the new ones
    const user = config.kc.getCurrentUser() as { token?: string };
    user.token = 'not-the-token';
    const wrong = new KubeClient(config, 'test').resource<Project>(PROJECT);
    expect(await reasonOf(wrong.list('default'))).toBe('Unauthorized');
    user.token = token;
    expect((await wrong.list('default')).items).toBeInstanceOf(Array);
  });
});
