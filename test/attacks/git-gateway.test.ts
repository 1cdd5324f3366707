// Attacks on the git gateway (issue 20 §4, DESIGN §8.1/§8.3), played with the real git binary as
// a malicious agent would, against the in-process API and a real host repository: rewriting or
// deleting the session branch, writing service refs that are not the session's own checkpoint,
// a stopped session's credentials, a push that stalls after its headers next to another client
// of the same project, and a push over the size limit.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { gzipSync } from 'node:zlib';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pushQuarantineDir } from '../../src/git/index.js';
import { pktLine } from '../../src/git/gateway.js';
import { gitGatewayUrl } from '../../src/lib/git-credential.js';
import { newSandboxToken } from '../../src/lib/sandbox-token.js';
import { SECRET, SESSION, type KubeObject, type Project, type Session } from '../../src/resources/index.js';
import { NAMESPACE, startHarness, type Harness } from '../changerequests/harness.js';
import { git as hostGit, seededHost, type HostRepo } from '../git/fixtures.js';
import { cloneCredentialOf, createTestSession, git, gitOk, type Credential, type TestSession } from '../helpers/git-gateway.js';
import { waitFor } from '../dev/util.js';

const MAX_PUSH_BYTES = 200_000;

describe('attacks on the git gateway', () => {
  let h: Harness;
  let host: HostRepo;
  let project: Project;
  let repoUrl: string;

  /** The host's value of any ref, or null. */
  const hostRef = (ref: string): string | null => {
    try {
      return hostGit(host.hostDir, 'rev-parse', '--verify', '-q', ref);
    } catch {
      return null;
    }
  };

  async function credentialFor(s: TestSession): Promise<Credential> {
    const res = await cloneCredentialOf(h, s.sandboxToken, project.metadata.uid!);
    expect(res.status).toBe(200);
    return await res.json() as Credential;
  }

  /** A clone on the session's branch, pushed once (the branch exists on the host). */
  async function agentClone(s: TestSession, cred: Credential): Promise<string> {
    const dir = path.join(host.root, `agent-${randomUUID().slice(0, 8)}`);
    await gitOk(host.root, ['clone', '-q', repoUrl, dir], cred);
    await gitOk(dir, ['checkout', '-q', '-b', s.id]);
    await commit(dir, `${s.id.slice(0, 8)}.txt`, 'first\n');
    await gitOk(dir, ['push', '-q', 'origin', 'HEAD'], cred);
    return dir;
  }

  async function commit(dir: string, file: string, text: string | Buffer): Promise<string> {
    writeFileSync(path.join(dir, file), text);
    await gitOk(dir, ['add', '-A']);
    await gitOk(dir, ['commit', '-q', '-m', `write ${file}`]);
    return gitOk(dir, ['rev-parse', 'HEAD']);
  }

  async function setSessionStatus(id: string, status: 'provisioning' | 'running' | 'stopped' | 'failed'): Promise<void> {
    const sessions = h.client.resource<Session>(SESSION);
    const current = await sessions.get(NAMESPACE, id);
    await sessions.replaceStatus({ ...current, status: { ...current.status, status } });
  }

  beforeAll(async () => {
    h = await startHarness({ fetchMaxAgeMs: 0, maxPushBytes: MAX_PUSH_BYTES });
    ({ host } = seededHost());
    project = await h.project('attacked', host.hostDir);
    repoUrl = gitGatewayUrl(h.apiUrl, project.metadata.uid!);
  }, 60_000);

  afterAll(async () => {
    await h?.close();
    host?.cleanup();
  });

  describe('the session branch is never rewritten', () => {
    let agent: TestSession;
    let cred: Credential;
    let dir: string;

    beforeAll(async () => {
      agent = await createTestSession(h, project);
      cred = await credentialFor(agent);
      dir = await agentClone(agent, cred);
    });

    it('refuses a force-push that rewrites the branch, naming the rule in git push output', async () => {
      const tip = await commit(dir, 'work.txt', 'reviewed work\n');
      await gitOk(dir, ['push', '-q', 'origin', 'HEAD'], cred);
      expect(host.tip(agent.id)).toBe(tip);
      await gitOk(dir, ['commit', '-q', '--amend', '-m', 'history rewritten under the reviewer']);
      const forced = await git(dir, ['push', '--force', 'origin', 'HEAD'], cred);
      expect(forced.code).not.toBe(0);
      expect(forced.stderr).toContain(`remote: svc: refusing to rewrite the session branch ${agent.id}`);
      expect(forced.stderr).toContain('no rewriting, no force-push');
      expect(forced.stderr).toMatch(/\[remote rejected\].*pre-receive hook declined/);
      expect(host.tip(agent.id)).toBe(tip);
      // a rewrite to an older commit (a reset) is refused too
      const reset = await git(dir, ['push', '--force', 'origin', `${tip}~1:refs/heads/${agent.id}`], cred);
      expect(reset.code).not.toBe(0);
      expect(reset.stderr).toContain('refusing to rewrite the session branch');
      expect(host.tip(agent.id)).toBe(tip);
      await gitOk(dir, ['reset', '-q', '--hard', tip]);
    });

    it('refuses to delete the branch, naming the rule', async () => {
      const before = host.tip(agent.id);
      const deleted = await git(dir, ['push', 'origin', `:refs/heads/${agent.id}`], cred);
      expect(deleted.code).not.toBe(0);
      expect(deleted.stderr).toContain(`remote: svc: refusing to delete the session branch ${agent.id}`);
      expect(deleted.stderr).toContain('no rewriting, no force-push');
      expect(host.tip(agent.id)).toBe(before);
    });

    it('still takes a fast-forward', async () => {
      const next = await commit(dir, 'more.txt', 'more\n');
      await gitOk(dir, ['push', '-q', 'origin', 'HEAD'], cred);
      expect(host.tip(agent.id)).toBe(next);
    });
  });

  describe('refs/svc/: a session writes only its own checkpoint ref', () => {
    let mine: TestSession;
    let other: TestSession;
    let cred: Credential;
    let otherCred: Credential;
    let dir: string;
    let otherDir: string;
    const checkpoint = (s: TestSession) => `refs/svc/checkpoints/${s.id}`;

    beforeAll(async () => {
      [mine, other] = [await createTestSession(h, project), await createTestSession(h, project)];
      [cred, otherCred] = [await credentialFor(mine), await credentialFor(other)];
      [dir, otherDir] = [await agentClone(mine, cred), await agentClone(other, otherCred)];
    });

    it('pushes, rewrites and fetches back its own checkpoint; the host carries it', async () => {
      const saved = await commit(dir, 'wip.txt', 'unsaved work\n');
      await gitOk(dir, ['push', '-q', 'origin', `+${saved}:${checkpoint(mine)}`], cred);
      expect(hostRef(checkpoint(mine))).toBe(saved);
      // a later checkpoint replaces it (not a fast-forward): allowed
      await gitOk(dir, ['reset', '-q', '--hard', 'HEAD~1']);
      const later = await commit(dir, 'wip.txt', 'other unsaved work\n');
      await gitOk(dir, ['push', '-q', 'origin', `+${later}:${checkpoint(mine)}`], cred);
      expect(hostRef(checkpoint(mine))).toBe(later);
      // a new sandbox of the session fetches it back (what svc-agent's restore does)
      const fresh = path.join(host.root, `restore-${randomUUID().slice(0, 8)}`);
      await gitOk(host.root, ['clone', '-q', repoUrl, fresh], cred);
      await gitOk(fresh, ['fetch', '-q', 'origin', checkpoint(mine)], cred);
      expect(await gitOk(fresh, ['rev-parse', 'FETCH_HEAD'])).toBe(later);
      await gitOk(dir, ['reset', '-q', '--hard', 'HEAD~1']);
    });

    it("sees its own checkpoint ref, never another session's", async () => {
      const theirs = await commit(otherDir, 'their-wip.txt', 'their unsaved work\n');
      await gitOk(otherDir, ['push', '-q', 'origin', `+${theirs}:${checkpoint(other)}`], otherCred);
      expect(hostRef(checkpoint(other))).toBe(theirs);
      const listed = await gitOk(dir, ['ls-remote', 'origin'], cred);
      expect(listed).toContain(checkpoint(mine));
      expect(listed).not.toContain(checkpoint(other));
      expect(listed).not.toContain('refs/svc/keep');
      const fetched = await git(dir, ['fetch', 'origin', checkpoint(other)], cred);
      expect(fetched.code).not.toBe(0);
    });

    it("cannot fetch another session's checkpoint by its sha (REST shows it), nor point its own refs at it", async () => {
      const theirs = await commit(otherDir, 'their-secret.txt', 'their unsaved secret\n');
      await gitOk(otherDir, ['push', '-q', 'origin', `+${theirs}:${checkpoint(other)}`], otherCred);
      await gitOk(otherDir, ['reset', '-q', '--hard', 'HEAD~1']);
      // protocol v2 lets a client want any object by id; v0 wants only what was advertised
      for (const version of ['2', '0']) {
        const fetched = await git(dir, ['-c', `protocol.version=${version}`, 'fetch', 'origin', theirs], cred);
        expect(fetched.code, `protocol v${version}: ${fetched.stderr}`).not.toBe(0);
        if (version === '2') expect(fetched.stderr).toContain(`svc: this session may fetch only the project's branches and its own checkpoint; ${theirs} is not among them`);
        expect((await git(dir, ['cat-file', '-e', theirs])).code).not.toBe(0);
      }
      const basic = Buffer.from(`${cred.username}:${cred.password}`).toString('base64');
      // a request is held only up to git http-backend's bound (here 12 MiB once unzipped, 200 KB sent:
      // within the gateway's bound on inflation)
      const unzipped = Buffer.alloc(12 * 1024 * 1024, '0');
      randomBytes(unzipped.length / 64).forEach((byte, i) => { unzipped[i * 64] = 'abcdef'.charCodeAt(byte % 6); });
      const bomb = await fetch(`${repoUrl}/git-upload-pack`, {
        method: 'POST',
        headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-git-upload-pack-request', 'content-encoding': 'gzip' },
        body: gzipSync(unzipped),
      });
      expect(await bomb.text()).toContain('ERR svc: not a git upload-pack request (pkt-lines, at most 10 MiB)');
      // what it may see it still fetches by sha: a branch's older commit, its own checkpoint
      const own = await commit(dir, 'own-wip.txt', 'own unsaved work\n');
      await gitOk(dir, ['push', '-q', 'origin', `+${own}:${checkpoint(mine)}`], cred);
      await gitOk(dir, ['reset', '-q', '--hard', 'HEAD~1']);
      const older = await commit(dir, 'older.txt', 'older\n');
      await commit(dir, 'newer.txt', 'newer\n');
      await gitOk(dir, ['push', '-q', 'origin', 'HEAD'], cred);
      const fresh = path.join(host.root, `by-sha-${randomUUID().slice(0, 8)}`);
      await gitOk(host.root, ['init', '-q', fresh]);
      await gitOk(fresh, ['fetch', '-q', repoUrl, own, older], cred);
      expect(await gitOk(fresh, ['cat-file', '-t', own])).toBe('commit');
      expect(await gitOk(fresh, ['cat-file', '-t', older])).toBe('commit');

      // a push that names their sha without bringing it (git's own client cannot: it lacks the
      // object; a hand-made request can, with an empty pack)
      const empty = Buffer.concat([Buffer.from('PACK'), Buffer.from([0, 0, 0, 2, 0, 0, 0, 0])]);
      const pack = Buffer.concat([empty, createHash('sha1').update(empty).digest()]);
      /** receive-pack's answer (latin1, so that a character is a byte): the report (band 1) and the hook's words (band 2) */
      const bands = (answer: string) => {
        const text = ['', '', ''];
        for (let at = 0; at + 4 <= answer.length;) {
          const size = Number.parseInt(answer.slice(at, at + 4), 16);
          if (size >= 5) text[answer.charCodeAt(at + 4)] += answer.slice(at + 5, at + size);
          at += Math.max(size, 4);
        }
        return { report: text[1]!, words: text[2]! };
      };
      for (const [ref, old] of [[checkpoint(mine), own], [`refs/heads/${mine.id}`, host.tip(mine.id)]] as const) {
        const res = await fetch(`${repoUrl}/git-receive-pack`, {
          method: 'POST',
          headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-git-receive-pack-request' },
          body: Buffer.concat([pktLine(`${old} ${theirs} ${ref}\0report-status side-band-64k\n`), Buffer.from('0000'), pack]),
        });
        const { report, words } = bands(Buffer.from(await res.arrayBuffer()).toString('latin1'));
        expect(report, ref).toContain(`ng ${ref} pre-receive hook declined`);
        expect(words).toMatch(/svc: refusing/);
        if (ref === checkpoint(mine)) expect(words).toContain(`svc: refusing the push: it names commit ${theirs}, which is on no branch nor this session's checkpoint`);
        expect(hostRef(ref)).toBe(old);
      }
      expect((await git(dir, ['cat-file', '-e', theirs])).code).not.toBe(0);
    });

    it.each([
      ["another session's checkpoint ref", () => `refs/svc/checkpoints/${other.id}`],
      ['a checkpoint ref of a session that does not exist', () => `refs/svc/checkpoints/${randomUUID()}`],
      ['another ref under refs/svc/', () => 'refs/svc/keep/anything'],
      ['a ref beside the checkpoints', () => `refs/svc/${mine.id}`],
    ])('refuses to write %s, and nothing moves', async (_what, ref) => {
      const target = ref();
      const before = hostRef(target);
      const mineBefore = host.tip(mine.id);
      const sha = await gitOk(dir, ['rev-parse', 'HEAD']);
      const ran = await git(dir, ['push', 'origin', `+${sha}:${target}`, `+HEAD:refs/heads/${mine.id}`], cred);
      expect(ran.code).not.toBe(0);
      expect(ran.stderr).toContain(`remote: svc: refusing to update ${target}: under refs/svc/ a session may write only its own checkpoint ref ${checkpoint(mine)}`);
      expect(hostRef(target)).toBe(before);
      expect(host.tip(mine.id)).toBe(mineBefore);
      const deleted = await git(dir, ['push', 'origin', `:${checkpoint(other)}`], cred);
      expect(deleted.code).not.toBe(0);
      expect(hostRef(checkpoint(other))).not.toBeNull();
    });

    it('may delete its own checkpoint ref', async () => {
      expect(hostRef(checkpoint(mine))).not.toBeNull();
      await gitOk(dir, ['push', '-q', 'origin', `:${checkpoint(mine)}`], cred);
      expect(hostRef(checkpoint(mine))).toBeNull();
    });
  });

  describe("a stopped or failed session's credentials", () => {
    it('are refused: the sandbox token gets no clone credential, an earlier clone credential no push (401)', async () => {
      const agent = await createTestSession(h, project);
      const cred = await credentialFor(agent);
      const dir = await agentClone(agent, cred);
      const pushed = host.tip(agent.id);
      await setSessionStatus(agent.id, 'stopped');

      expect((await cloneCredentialOf(h, agent.sandboxToken, project.metadata.uid!)).status).toBe(401);
      const basic = `Basic ${Buffer.from(`${cred.username}:${cred.password}`).toString('base64')}`;
      for (const service of ['git-upload-pack', 'git-receive-pack']) {
        expect((await fetch(`${repoUrl}/info/refs?service=${service}`, { headers: { authorization: basic } })).status).toBe(401);
      }
      await commit(dir, 'after-stop.txt', 'pushed after the stop\n');
      const push = await git(dir, ['push', 'origin', 'HEAD'], cred);
      expect(push.code).not.toBe(0);
      expect(push.stderr).toMatch(/Authentication failed/);
      expect(host.tip(agent.id)).toBe(pushed);

      await setSessionStatus(agent.id, 'failed');
      expect((await cloneCredentialOf(h, agent.sandboxToken, project.metadata.uid!)).status).toBe(401);
      expect((await git(dir, ['push', 'origin', 'HEAD'], cred)).code).not.toBe(0);
    });

    it('stay refused after a wake that rotated them; the new ones work', async () => {
      const agent = await createTestSession(h, project);
      const oldCred = await credentialFor(agent);
      const dir = await agentClone(agent, oldCred);
      await setSessionStatus(agent.id, 'stopped');
      // the wake: new tokens in the Session Secret, the session provisioning again
      const rotated = newSandboxToken(agent.id);
      const secrets = h.client.resource<KubeObject & { data?: Record<string, string> }>(SECRET);
      const secret = await secrets.get(NAMESPACE, `svc-session-${agent.id}`);
      await secrets.replace({ ...secret, data: { ...secret.data, sandboxToken: Buffer.from(rotated).toString('base64') } });
      await setSessionStatus(agent.id, 'provisioning');

      expect((await cloneCredentialOf(h, agent.sandboxToken, project.metadata.uid!)).status).toBe(401);
      const sha = await commit(dir, 'woken.txt', 'after the wake\n');
      expect((await git(dir, ['push', 'origin', 'HEAD'], oldCred)).code).not.toBe(0);
      const fresh = await credentialFor({ id: agent.id, sandboxToken: rotated });
      await gitOk(dir, ['push', '-q', 'origin', 'HEAD'], fresh);
      expect(host.tip(agent.id)).toBe(sha);
    });
  });

  describe('a stalled push', () => {
    it('(headers sent, then nothing) blocks neither a git ls-remote nor a push of the same project', async () => {
      const staller = await createTestSession(h, project);
      const stallerCred = await credentialFor(staller);
      const url = new URL(`${repoUrl}/git-receive-pack`);
      const socket = net.connect(Number(url.port), url.hostname);
      await new Promise<void>((resolve, reject) => { socket.once('connect', resolve); socket.once('error', reject); });
      socket.on('error', () => undefined);
      socket.write([
        `POST ${url.pathname} HTTP/1.1`,
        `Host: ${url.host}`,
        `Authorization: Basic ${Buffer.from(`${stallerCred.username}:${stallerCred.password}`).toString('base64')}`,
        'Content-Type: application/x-git-receive-pack-request',
        'Content-Length: 100000',
        '', '',
      ].join('\r\n'));
      try {
        await new Promise((r) => setTimeout(r, 1000)); // the gateway has the request and waits for its body
        const agent = await createTestSession(h, project);
        const cred = await credentialFor(agent);
        // a functional bound (generous for a loaded machine): before issue 20 it waited for the staller
        const listed = await git(host.root, ['ls-remote', repoUrl], cred, 3000);
        expect(listed.code, listed.stderr).toBe(0);
        expect(listed.stdout).toContain('refs/heads/main');
        const dir = await agentClone(agent, cred);
        expect(host.tip(agent.id)).toBe(await gitOk(dir, ['rev-parse', 'HEAD']));
      } finally {
        socket.destroy();
      }
    }, 60_000);
  });

  describe('a request made to cost the gateway more than it costs the sender', () => {
    let agent: TestSession;
    let cred: Credential;
    let dir: string;
    const basic = () => `Basic ${Buffer.from(`${cred.username}:${cred.password}`).toString('base64')}`;

    beforeAll(async () => {
      agent = await createTestSession(h, project);
      cred = await credentialFor(agent);
      dir = await agentClone(agent, cred);
    });

    it('a push naming thousands of refs (22 KB gzipped) is refused before the project is locked; nothing moves', async () => {
      // 8,000 deletions of its own checkpoint, each with another old sha: the hook read them one by
      // one under the project's lock (10 s here, 189 s for 32,000, another session's ls-remote waiting)
      const zero = '0'.repeat(40);
      const lines = Array.from({ length: 8_000 }, (_, i) => pktLine(`${createHash('sha1').update(String(i)).digest('hex')} ${zero} refs/svc/checkpoints/${agent.id}${i === 0 ? '\0report-status' : ''}\n`));
      const before = host.tip(agent.id);
      const res = await fetch(`${repoUrl}/git-receive-pack`, {
        method: 'POST',
        headers: { authorization: basic(), 'content-type': 'application/x-git-receive-pack-request', 'content-encoding': 'gzip' },
        body: gzipSync(Buffer.concat([...lines, Buffer.from('0000')])),
      });
      expect(res.status).toBe(400);
      expect((await res.json() as { error: string }).error).toContain('the push names more than 64 refs');
      expect(host.tip(agent.id)).toBe(before);
      // an ordinary push still lands
      const sha = await commit(dir, 'after-refs.txt', 'ok\n');
      await gitOk(dir, ['push', '-q', 'origin', 'HEAD'], cred);
      expect(host.tip(agent.id)).toBe(sha);
    });

    it('pushes of one session at once are taken one after the other (each received push is on disk): both land', async () => {
      const sha = await commit(dir, 'together.txt', 'both\n');
      const [branch, saved] = await Promise.all([
        git(dir, ['push', '-q', 'origin', 'HEAD'], cred),
        git(dir, ['push', '-q', 'origin', `+HEAD:refs/svc/checkpoints/${agent.id}`], cred),
      ]);
      expect([branch.code, saved.code], branch.stderr + saved.stderr).toEqual([0, 0]);
      expect([host.tip(agent.id), hostRef(`refs/svc/checkpoints/${agent.id}`)]).toEqual([sha, sha]);
    });

    it('a gzip body that inflates 1000 times over (10 KB to 9.5 MiB) is refused, not held; a fetch still works', async () => {
      const body = gzipSync(Buffer.from('0000'.repeat(2_500_000)));
      expect(body.length).toBeLessThan(20_000);
      const res = await fetch(`${repoUrl}/git-upload-pack`, {
        method: 'POST',
        headers: { authorization: basic(), 'content-type': 'application/x-git-upload-pack-request', 'content-encoding': 'gzip', 'git-protocol': 'version=2' },
        body,
      });
      // held, it was answered as any request of 9.5 MiB of pkt-lines
      expect(await res.text()).toContain('ERR svc: the request was not read: the gzip body inflates more than 100 times: send it uncompressed');
      expect((await git(dir, ['fetch', '-q', 'origin'], cred)).code).toBe(0);
    });
  });

  describe('a push over SVC_GIT_MAX_PUSH_BYTES', () => {
    let agent: TestSession;
    let cred: Credential;
    let dir: string;

    beforeAll(async () => {
      agent = await createTestSession(h, project);
      cred = await credentialFor(agent);
      dir = await agentClone(agent, cred);
    });

    it.each([
      ['with a Content-Length', []],
      ['streamed in chunks', ['-c', 'http.postBuffer=65536']],
    ])('is refused with 413 %s; nothing moves and nothing stays behind', async (_how, config) => {
      const before = host.tip(agent.id);
      await commit(dir, `big-${config.length}.bin`, randomBytes(MAX_PUSH_BYTES * 2));
      try {
        const ran = await git(dir, [...config, 'push', 'origin', 'HEAD'], cred);
        expect(ran.code).not.toBe(0);
        expect(ran.stderr).toContain('413');
        expect(host.tip(agent.id)).toBe(before);
        // a streamed push is preceded by git's small probe push, whose body goes once it is answered
        const quarantine = pushQuarantineDir(h.mirrorDir);
        await waitFor('the received pushes discarded', async () => (existsSync(quarantine) ? readdirSync(quarantine) : []).length === 0, 5_000);
      } finally {
        await gitOk(dir, ['reset', '-q', '--hard', 'HEAD~1']);
      }
    });

    it('answers 413 with the limit named before reading a body declared too large', async () => {
      const res = await fetch(`${repoUrl}/git-receive-pack`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${cred.username}:${cred.password}`).toString('base64')}`,
          'content-type': 'application/x-git-receive-pack-request',
        },
        body: Buffer.alloc(MAX_PUSH_BYTES + 1),
      });
      expect(res.status).toBe(413);
      expect((await res.json() as { error: string }).error).toContain('SVC_GIT_MAX_PUSH_BYTES');
    });

    it('a push within the limit still lands', async () => {
      const sha = await commit(dir, 'small.bin', randomBytes(MAX_PUSH_BYTES / 4));
      await gitOk(dir, ['push', '-q', 'origin', 'HEAD'], cred);
      expect(host.tip(agent.id)).toBe(sha);
    });
  });
});
