/* eslint-disable @typescript-eslint/no-explicit-any -- JSON response bodies */
// Project secrets over REST (SPEC §2.4): status codes, access, the Secret the values live in.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT, SECRET, type Project, type ProjectSecretsSecret } from '../../src/resources/index.js';
import { mintToken } from '../../src/api/tokens.js';
import { newSandboxToken } from '../../src/lib/sandbox-token.js';
import { startHarness, NAMESPACE, type Harness } from '../changerequests/harness.js';
import { seededHost, type HostRepo } from '../git/fixtures.js';

describe('project secrets REST', () => {
  let h: Harness;
  let host: HostRepo;
  let project: Project;
  let base: string;
  let secretReader: string;
  let secretWriter: string;

  beforeAll(async () => {
    h = await startHarness();
    ({ host } = seededHost());
    project = await h.project('sec', host.hostDir);
    base = `/projects/${project.metadata.uid}/secrets`;
    const grant = async (access: 'read' | 'write', capabilities: string[]) => {
      const { token, secret } = mintToken({ userId: h.userId, access, capabilities }, NAMESPACE);
      await h.client.resource(SECRET).create(secret as any);
      return token;
    };
    secretReader = await grant('read', ['project.secret.read']);
    secretWriter = await grant('write', ['project.secret.write', 'project.secret.read']);
  }, 60_000);

  afterAll(async () => {
    await h?.close();
    host?.cleanup();
  });

  const stored = () => h.client.resource<ProjectSecretsSecret>(SECRET).find(NAMESPACE, 'sec-secrets');

  it('lists nothing with revision "0" before the first secret', async () => {
    expect(await h.call(secretReader, 'GET', base)).toEqual({ status: 200, body: { secrets: [], revision: '0' } });
  });

  it('sets (204), lists names and times without values, and changes the revision on every write', async () => {
    const put = await h.call(secretWriter, 'PUT', `${base}/API_KEY`, { value: 'hunter2-value' });
    expect(put).toEqual({ status: 204, body: {} });
    const first = await h.call(secretReader, 'GET', base);
    expect(first.status).toBe(200);
    expect(first.body.secrets).toEqual([{ name: 'API_KEY', updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) }]);
    expect(JSON.stringify(first.body)).not.toContain('hunter2');
    expect((await h.call(secretWriter, 'PUT', `${base}/OTHER`, { value: '' })).status).toBe(204);
    const second = await h.call(secretReader, 'GET', base);
    expect(second.body.secrets.map((s: any) => s.name)).toEqual(['API_KEY', 'OTHER']);
    expect(second.body.revision).not.toBe(first.body.revision);

    const secret = (await stored())!;
    expect(Buffer.from(secret.data!.API_KEY!, 'base64').toString()).toBe('hunter2-value');
    expect(secret.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'Project', uid: project.metadata.uid })]);
    expect(second.body.revision).toBe(secret.metadata.resourceVersion);

    expect((await h.call(secretWriter, 'DELETE', `${base}/OTHER`)).status).toBe(204);
    const third = await h.call(secretReader, 'GET', base);
    expect(third.body.secrets.map((s: any) => s.name)).toEqual(['API_KEY']);
    expect(third.body.revision).not.toBe(second.body.revision);
  });

  it('refuses a reserved or malformed name and a missing value (400), changing nothing', async () => {
    const before = (await stored())!.metadata.resourceVersion;
    const reserved = await h.call(secretWriter, 'PUT', `${base}/SVC_TOKEN`, { value: 'x' });
    expect(reserved.status).toBe(400);
    expect(reserved.body.error).toMatch(/reserved/);
    expect((await h.call(secretWriter, 'PUT', `${base}/lower`, { value: 'x' })).status).toBe(400);
    expect((await h.call(secretWriter, 'PUT', `${base}/GOOD`, {})).status).toBe(400);
    expect((await h.call(secretWriter, 'PUT', `${base}/GOOD`, { value: 3 })).status).toBe(400);
    expect(await h.call(secretWriter, 'PUT', `${base}/GOOD`, { value: 'v', zzz: 1 })).toMatchObject({ status: 400, body: { error: 'unknown field(s): zzz (allowed: value)' } });
    expect((await h.call(secretWriter, 'PUT', `${base}/GOOD`, undefined, 'not json')).status).toBe(400);
    expect((await h.call(secretWriter, 'DELETE', `${base}/SVC_X`)).status).toBe(400);
    expect((await stored())!.metadata.resourceVersion).toBe(before);
  });

  it('answers 404 for an unknown project or name', async () => {
    expect((await h.call(secretWriter, 'GET', `/projects/${randomUUID()}/secrets`)).status).toBe(404);
    expect((await h.call(secretWriter, 'DELETE', `${base}/NOPE`)).status).toBe(404);
  });

  it('needs read + project.secret.read to list, write + project.secret.write to change (403), a known token (401)', async () => {
    expect((await h.call(h.tokens.reader, 'GET', base)).status).toBe(403);
    expect((await h.call(secretReader, 'PUT', `${base}/X`, { value: 'v' })).status).toBe(403);
    expect((await h.call(h.tokens.writer, 'PUT', `${base}/X`, { value: 'v' })).status).toBe(403);
    expect((await h.call(h.tokens.pusher, 'DELETE', `${base}/API_KEY`)).status).toBe(403);
    expect((await h.call(h.tokens.otherProject, 'GET', base)).status).toBe(403);
    expect((await h.call(h.tokens.admin, 'GET', base)).status).toBe(200);
    expect((await h.call(newSandboxToken(randomUUID()), 'GET', base)).status).toBe(401);
    const anonymous = await fetch(`${h.apiUrl}${base}`);
    expect(anonymous.status).toBe(401);
  });

  it('records Events with names only', async () => {
    const { items } = await h.client.resource<any>(EVENT).list(NAMESPACE);
    const mine = items.filter((e: any) => e.involvedObject?.uid === project.metadata.uid);
    expect(mine.map((e: any) => e.reason)).toEqual(expect.arrayContaining(['SecretSet', 'SecretDeleted']));
    expect(JSON.stringify(items)).not.toContain('hunter2');
  });
});
