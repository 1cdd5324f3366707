/* eslint-disable @typescript-eslint/no-explicit-any -- JSON response bodies */
// The git gateway with the real git binary: an agent's clone, fetch and pushes through the API
// (clone credential as HTTP Basic), relayed to a real host repository; refusals as git prints them.
import { randomUUID } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newSandboxToken, signCloneCredential } from '../../src/lib/sandbox-token.js';
import { gitGatewayUrl } from '../../src/lib/git-credential.js';
import { API_VERSION, PROJECT, SECRET, type KubeObject, type Project } from '../../src/resources/index.js';
import { startHarness, NAMESPACE, type Harness } from '../changerequests/harness.js';
import { seededHost, type HostRepo, type WorkClone } from '../git/fixtures.js';
import { startGitHttpServer, type GitHttpServer } from '../helpers/git-http-server.js';
import { cloneCredentialOf, createTestSession, git, gitOk, type TestSession } from '../helpers/git-gateway.js';

describe('git gateway', () => {
  let h: Harness;
  let host: HostRepo;
  let seed: WorkClone;
  let project: Project;
  let repoUrl: string;
  let mine: TestSession;
  let other: TestSession;
  let credential: { username: string; password: string; expires_at: string };

  const session = (owner: Project) => createTestSession(h, owner);
  const credentialOf = (token: string, projectId = project.metadata.uid!) => cloneCredentialOf(h, token, projectId);

  async function clone(cred = credential): Promise<string> {
    const dir = path.join(host.root, `agent-${randomUUID().slice(0, 8)}`);
    await gitOk(host.root, ['clone', '-q', repoUrl, dir], cred);
    return dir;
  }

  async function commit(dir: string, file: string, text: string, message = `write ${file}`): Promise<string> {
    writeFileSync(path.join(dir, file), text);
    await gitOk(dir, ['add', '-A']);
    await gitOk(dir, ['commit', '-q', '-m', message]);
    return gitOk(dir, ['rev-parse', 'HEAD']);
  }

  beforeAll(async () => {
    h = await startHarness();
    ({ host, work: seed } = seededHost());
    project = await h.project('gw', host.hostDir);
    repoUrl = gitGatewayUrl(h.apiUrl, project.metadata.uid!);
    mine = await session(project);
    other = await session(project);
    const res = await credentialOf(mine.sandboxToken);
    expect(res.status).toBe(200);
    credential = await res.json() as typeof credential;
  }, 60_000);

  afterAll(async () => {
    await h?.close();
    host?.cleanup();
  });

  describe('clone credential', () => {
    it('is a short-lived credential for the session, given for its sandbox token', () => {
      expect(credential.username).toBe(mine.id);
      const ttl = Date.parse(credential.expires_at) - Date.now();
      expect(ttl).toBeGreaterThan(50 * 60_000);
      expect(ttl).toBeLessThanOrEqual(3600_000);
      expect(credential.password).not.toContain(mine.sandboxToken);
    });

    it('is refused (401) to a CLI token, a wrong or missing token, and another project', async () => {
      expect((await credentialOf(h.tokens.admin)).status).toBe(401);
      expect((await credentialOf(newSandboxToken(mine.id))).status).toBe(401);
      expect((await credentialOf(newSandboxToken(randomUUID()))).status).toBe(401);
      expect((await credentialOf(mine.sandboxToken, randomUUID())).status).toBe(401);
      const none = await fetch(`${h.apiUrl}/projects/${project.metadata.uid}/git/clone-credential`);
      expect(none.status).toBe(401);
      expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    });

    it('the sandbox token is refused by the project REST routes', async () => {
      expect((await h.call(mine.sandboxToken, 'GET', `/projects/${project.metadata.uid}`)).status).toBe(401);
      expect((await h.call(mine.sandboxToken, 'GET', `/projects/${project.metadata.uid}/change-requests`)).status).toBe(401);
    });
  });

  describe('authentication', () => {
    it('answers 401 with a Basic challenge without, with a wrong, or with an expired credential', async () => {
      const url = `${repoUrl}/info/refs?service=git-upload-pack`;
      const basic = (u: string, p: string) => ({ authorization: `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}` });
      const expired = signCloneCredential(mine.sandboxToken, project.metadata.uid!, mine.id, Date.now() - 2 * 3600_000);
      const forOther = signCloneCredential(mine.sandboxToken, project.metadata.uid!, other.id, Date.now());
      for (const headers of [{}, basic(mine.id, 'nope'), basic(mine.id, expired.password), basic(other.id, forOther.password), basic(mine.id, mine.sandboxToken)]) {
        const res = await fetch(url, { headers });
        expect(res.status).toBe(401);
        expect(res.headers.get('www-authenticate')).toBe('Basic realm="svc"');
      }
      const ok = await fetch(url, { headers: basic(credential.username, credential.password) });
      expect(ok.status).toBe(200);
      expect(ok.headers.get('content-type')).toBe('application/x-git-upload-pack-advertisement');
    });

    it('git fails to clone without a credential and with an expired one', async () => {
      const none = await git(host.root, ['clone', '-q', repoUrl, path.join(host.root, 'no-cred')]);
      expect(none.code).not.toBe(0);
      expect(none.stderr).toMatch(/could not read Username|Authentication failed/);
      const expired = signCloneCredential(mine.sandboxToken, project.metadata.uid!, mine.id, Date.now() - 2 * 3600_000);
      const old = await git(host.root, ['clone', '-q', repoUrl, path.join(host.root, 'old-cred')], expired);
      expect(old.code).not.toBe(0);
      expect(old.stderr).toMatch(/Authentication failed/);
    });
  });

  describe('fetch and push', () => {
    let dir: string;

    beforeAll(async () => {
      dir = await clone();
      await gitOk(dir, ['checkout', '-q', '-b', mine.id]);
    });

    it('clones the project with the default branch checked out', async () => {
      expect(readFileSync(path.join(dir, 'README.md'), 'utf8')).toBe('# demo\n');
      expect(await gitOk(dir, ['rev-parse', 'origin/main'])).toBe(host.tip('main'));
      // service refs of the mirror are not shown
      expect(await gitOk(dir, ['ls-remote', 'origin'], credential)).not.toContain('refs/svc');
    });

    it('serves protocol v0 clients too (no Git-Protocol header)', async () => {
      const v0 = path.join(host.root, 'agent-v0');
      await gitOk(host.root, ['-c', 'protocol.version=0', 'clone', '-q', repoUrl, v0], credential);
      expect(await gitOk(v0, ['rev-parse', 'origin/main'])).toBe(host.tip('main'));
    });

    it('fetches what landed on the host since (the mirror is fetched fresh)', async () => {
      seed.checkout('main');
      const sha = seed.write('NEWS.md', 'news\n').commit('news');
      seed.push('main');
      await gitOk(dir, ['fetch', '-q', 'origin'], credential);
      expect(await gitOk(dir, ['rev-parse', 'origin/main'])).toBe(sha);
      await gitOk(dir, ['merge', '-q', '--ff-only', 'origin/main']);
    });

    it('pushes its own branch to the host (new, fast-forward; never forced), and the CR routes see it', async () => {
      const first = await commit(dir, 'a.txt', 'one\n');
      await gitOk(dir, ['push', '-q', 'origin', 'HEAD'], credential);
      expect(host.tip(mine.id)).toBe(first);
      const second = await commit(dir, 'a.txt', 'two\n');
      await gitOk(dir, ['push', '-q', 'origin', 'HEAD'], credential);
      expect(host.tip(mine.id)).toBe(second);
      await gitOk(dir, ['commit', '-q', '--amend', '-m', 'rewritten']);
      const plain = await git(dir, ['push', 'origin', 'HEAD'], credential);
      expect(plain.code).not.toBe(0); // git itself refuses a non-fast-forward without --force
      // issue 20: the gateway refuses it with --force too (SPEC §1: no rewriting, no force-push)
      const forced = await git(dir, ['push', '--force', 'origin', 'HEAD'], credential);
      expect(forced.code).not.toBe(0);
      expect(forced.stderr).toContain('no force-push');
      expect(host.tip(mine.id)).toBe(second);
      await gitOk(dir, ['reset', '-q', '--hard', second]);

      const cr = await h.call(h.tokens.admin, 'POST', `/projects/${project.metadata.uid}/change-requests`, { title: 'agent work', head_ref: mine.id });
      expect(cr.status).toBe(201);
      expect((cr.body as any).change_request.head_commit_sha).toBe(second);
    });

    it.each([
      ['the default branch', 'HEAD:main', 'refs/heads/main'],
      ["another session's branch", () => `HEAD:refs/heads/${other.id}`, 'refs/heads/'],
      ['a tag', 'HEAD:refs/tags/v1', 'refs/tags/v1'],
      ['a new branch', 'HEAD:refs/heads/feature', 'refs/heads/feature'],
    ])('refuses a push to %s with a message git prints, and nothing moves', async (_what, spec, named) => {
      const refspec = typeof spec === 'function' ? spec() : spec;
      const mainBefore = host.tip('main');
      const ran = await git(dir, ['push', 'origin', refspec], credential);
      expect(ran.code).not.toBe(0);
      expect(ran.stderr).toContain(`remote: svc: refusing to update ${named}`);
      expect(ran.stderr).toContain(`only its own branch ${mine.id}`);
      expect(ran.stderr).toContain('svc cr open');
      expect(ran.stderr).toMatch(/\[remote rejected\].*pre-receive hook declined/);
      expect(host.tip('main')).toBe(mainBefore);
      expect(host.tip(other.id)).toBeNull();
      expect(host.tip('feature')).toBeNull();
      expect(await gitOk(host.hostDir, ['tag', '--list'])).toBe('');
    });

    it('refuses a push mixing its own branch with another ref, and updates neither', async () => {
      const before = host.tip(mine.id);
      await commit(dir, 'b.txt', 'b\n');
      const ran = await git(dir, ['push', 'origin', 'HEAD', 'HEAD:main'], credential);
      expect(ran.code).not.toBe(0);
      expect(host.tip(mine.id)).toBe(before);
    });

    it("relays the host's refusal (a pre-receive hook) to the pusher", async () => {
      const hook = path.join(host.hostDir, 'hooks', 'pre-receive');
      writeFileSync(hook, '#!/bin/sh\necho "policy: commits must be signed off" >&2\nexit 1\n');
      chmodSync(hook, 0o755);
      try {
        const before = host.tip(mine.id);
        await commit(dir, 'c.txt', 'c\n');
        const ran = await git(dir, ['push', 'origin', 'HEAD'], credential);
        expect(ran.code).not.toBe(0);
        expect(ran.stderr).toContain('svc: the repository host refused the push');
        expect(ran.stderr).toContain('policy: commits must be signed off');
        expect(ran.stderr).not.toContain(host.hostDir);
        expect(host.tip(mine.id)).toBe(before);
        // the mirror did not move either: a fetch shows the host's tip
        await gitOk(dir, ['fetch', '-q', 'origin'], credential);
        expect(await gitOk(dir, ['rev-parse', `origin/${mine.id}`])).toBe(before);
      } finally {
        writeFileSync(hook, '#!/bin/sh\nexit 0\n');
      }
      await gitOk(dir, ['push', '-q', 'origin', 'HEAD'], credential);
      expect(host.tip(mine.id)).toBe(await gitOk(dir, ['rev-parse', 'HEAD']));
    });

    it('another session cannot push to this session\'s branch', async () => {
      const res = await credentialOf(other.sandboxToken);
      const otherCredential = await res.json() as typeof credential;
      const before = host.tip(mine.id);
      const ran = await git(dir, ['push', '-f', 'origin', `HEAD~1:refs/heads/${mine.id}`], otherCredential);
      expect(ran.code).not.toBe(0);
      expect(ran.stderr).toContain(`only its own branch ${other.id}`);
      expect(host.tip(mine.id)).toBe(before);
      expect(existsSync(path.join(host.hostDir, 'refs', 'heads', other.id))).toBe(false);
    });
  });

  describe('checkpoint refs (DESIGN §8.3)', () => {
    let dir: string;
    const hostRef = async (ref: string) => (await git(host.hostDir, ['rev-parse', '--verify', '-q', ref])).stdout.trim() || null;
    const mineRef = () => `refs/svc/checkpoints/${mine.id}`;

    beforeAll(async () => {
      dir = await clone();
      await gitOk(dir, ['checkout', '-q', '-B', mine.id, `origin/${mine.id}`]);
    });

    it('a session writes its own checkpoint ref, rewriting included, and reads it back; its branch and checkpoint go in one push', async () => {
      const base = await gitOk(dir, ['rev-parse', 'HEAD']);
      const first = await gitOk(dir, ['commit-tree', `${base}^{tree}`, '-p', base, '-m', 'checkpoint 1']);
      await gitOk(dir, ['push', '-q', 'origin', `+${first}:${mineRef()}`], credential);
      expect(await hostRef(mineRef())).toBe(first);
      // a rewrite (not a descendant of the first) is accepted
      const second = await gitOk(dir, ['commit-tree', `${base}^{tree}`, '-p', base, '-m', 'checkpoint 2']);
      await gitOk(dir, ['push', '-q', 'origin', `+${second}:${mineRef()}`], credential);
      expect(await hostRef(mineRef())).toBe(second);
      // a fresh sandbox of the session fetches it through the gateway
      const fresh = await clone();
      await gitOk(fresh, ['fetch', '-q', 'origin', `+${mineRef()}:${mineRef()}`], credential);
      expect(await gitOk(fresh, ['rev-parse', mineRef()])).toBe(second);
      // the branch and the checkpoint in one push
      const tip = await commit(dir, 'ck.txt', 'ck\n');
      const third = await gitOk(dir, ['commit-tree', `${tip}^{tree}`, '-p', tip, '-m', 'checkpoint 3']);
      await gitOk(dir, ['push', '-q', 'origin', 'HEAD', `+${third}:${mineRef()}`], credential);
      expect(host.tip(mine.id)).toBe(tip);
      expect(await hostRef(mineRef())).toBe(third);
    });

    it('another session neither sees nor writes it; other refs under refs/svc are refused; the session may delete its own', async () => {
      const before = await hostRef(mineRef());
      const otherCredential = await (await credentialOf(other.sandboxToken)).json() as typeof credential;
      expect(await gitOk(dir, ['ls-remote', 'origin'], otherCredential)).not.toContain('refs/svc');
      expect(await gitOk(dir, ['ls-remote', 'origin'], credential)).toContain(mineRef());
      const stolen = await git(dir, ['push', 'origin', `+HEAD:${mineRef()}`], otherCredential);
      expect(stolen.code).not.toBe(0);
      for (const ref of [`refs/svc/checkpoints/${other.id}-x`, 'refs/svc/keep/x', `refs/svc/checkpoints/${mine.id}/deeper`]) {
        const ran = await git(dir, ['push', 'origin', `+HEAD:${ref}`], credential);
        expect(ran.code, ref).not.toBe(0);
        expect(await hostRef(ref)).toBeNull();
      }
      expect(await hostRef(mineRef())).toBe(before);
      // its own scratch state (docs/git-gateway.md): deleting it loses nothing of anyone else's
      await gitOk(dir, ['push', '-q', 'origin', `:${mineRef()}`], credential);
      expect(await hostRef(mineRef())).toBeNull();
    });
  });
  describe('a private host over HTTPS-like smart HTTP', () => {
    const HOST_PASSWORD = 'host-password-never-in-a-sandbox';
    let server: GitHttpServer;
    let privateProject: Project;
    let agent: TestSession;
    let agentCredential: { username: string; password: string };
    let cutPushes = false;

    beforeAll(async () => {
      server = await startGitHttpServer({ root: host.root, auth: { username: 'svc-bot', password: HOST_PASSWORD }, cut: (_method, p) => cutPushes && p.endsWith('git-receive-pack') });
      await h.client.resource(SECRET).create({
        apiVersion: 'v1', kind: 'Secret', metadata: { name: 'host-creds', namespace: NAMESPACE }, type: 'Opaque',
        data: { username: Buffer.from('svc-bot').toString('base64'), password: Buffer.from(HOST_PASSWORD).toString('base64') },
      } as KubeObject);
      privateProject = await h.client.resource<Project>(PROJECT).create({
        apiVersion: API_VERSION, kind: PROJECT.kind, metadata: { name: 'private', namespace: NAMESPACE },
        spec: { repoUrl: `${server.url}/host.git`, defaultBranch: 'main', gitCredentialsSecretRef: { name: 'host-creds' } },
      });
      agent = await session(privateProject);
      agentCredential = await (await credentialOf(agent.sandboxToken, privateProject.metadata.uid)).json() as typeof agentCredential;
    });

    afterAll(() => server?.close());

    it('clones and pushes with the project\'s own credentials, which never reach the agent', async () => {
      const url = gitGatewayUrl(h.apiUrl, privateProject.metadata.uid!);
      const dir = path.join(host.root, 'private-agent');
      const cloned = await git(host.root, ['clone', url, dir], agentCredential);
      expect(cloned.code).toBe(0);
      await gitOk(dir, ['checkout', '-q', '-b', agent.id]);
      const sha = await commit(dir, 'private.txt', 'p\n');
      const pushed = await git(dir, ['push', 'origin', 'HEAD'], agentCredential);
      expect(pushed.code).toBe(0);
      expect(host.tip(agent.id)).toBe(sha);
      // the host saw the project's user on the relayed push, never the agent's session
      expect(server.requests.filter((r) => r.path.endsWith('git-receive-pack')).map((r) => r.user)).toContain('svc-bot');
      expect(server.requests.some((r) => r.user === agent.id)).toBe(false);
      for (const text of [cloned.stdout, cloned.stderr, pushed.stdout, pushed.stderr, readFileSync(path.join(dir, '.git', 'config'), 'utf8')]) {
        expect(text).not.toContain(HOST_PASSWORD);
        expect(text).not.toContain(server.url);
      }
    });

    it('a relay that does not reach the host says so with git\'s words (svc-agent waits that out), not that the host refused it', async () => {
      const dir = path.join(host.root, 'private-agent');
      const before = host.tip(agent.id);
      await commit(dir, 'cut.txt', 'cut\n');
      cutPushes = true;
      try {
        const ran = await git(dir, ['push', 'origin', 'HEAD'], agentCredential);
        expect(ran.code).not.toBe(0);
        expect(ran.stderr).toContain(`remote: svc: the push of refs/heads/${agent.id} did not reach the repository host:`);
        expect(ran.stderr).toMatch(/remote: {3}.*(hung up unexpectedly|RPC failed|Empty reply|connection)/i);
        expect(ran.stderr).not.toContain('refused the push');
        expect(ran.stderr).not.toContain(server.url);
        expect(ran.stderr).not.toContain(HOST_PASSWORD);
        expect(host.tip(agent.id)).toBe(before);
      } finally {
        cutPushes = false;
      }
      await gitOk(dir, ['push', '-q', 'origin', 'HEAD'], agentCredential);
      expect(host.tip(agent.id)).toBe(await gitOk(dir, ['rev-parse', 'HEAD']));
    });

    it('says the repository cannot be reached when the project\'s credentials are wrong', async () => {
      await h.client.resource(SECRET).replace({
        ...(await h.client.resource(SECRET).get(NAMESPACE, 'host-creds')),
        data: { username: Buffer.from('svc-bot').toString('base64'), password: Buffer.from('wrong').toString('base64') },
      } as KubeObject);
      const ran = await git(host.root, ['ls-remote', gitGatewayUrl(h.apiUrl, privateProject.metadata.uid!)], agentCredential);
      expect(ran.code).not.toBe(0);
      expect(ran.stderr).toContain('remote error: svc: the project repository cannot be reached');
      expect(ran.stderr).not.toContain('wrong');
      // a push asks receive-pack's info/refs: the same words (its service line is one byte longer)
      const pushed = await git(path.join(host.root, 'private-agent'), ['push', 'origin', 'HEAD'], agentCredential);
      expect(pushed.code).not.toBe(0);
      expect(pushed.stderr).toContain('remote error: svc: the project repository cannot be reached');
      expect(pushed.stderr).not.toContain('wrong');
    });
  });
});
