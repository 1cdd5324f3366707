/* eslint-disable @typescript-eslint/no-explicit-any -- JSON output of the CLI and kubectl */
// A private repository over SSH, end to end (issue 23), against a real sshd (Debian's
// openssh-server, test/helpers/sshd.ts) on a loopback port: the documented `kubectl create secret`
// recipe, `svc projects create --credentials-secret`; the operator's mirror fetch and session
// branch push, the agent's push through the git gateway (relayed to the host over SSH), a CR
// merge; then a wrong host key and a wrong user key, each with its own reason on the Project.
// svc dev runs with a HOME whose ~/.ssh holds the RIGHT key and host key: the failures prove that
// only the Secret's key and known_hosts are used, never the machine's.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildArtifacts, cleanupArtifacts } from '../daemon/harness.js';
import { REPO_ROOT, removeDevDir, startDev, type DevInstance } from '../helpers/dev.js';
import { generateKey, knownHostsLine, SSHD, startSshd, type Sshd } from '../helpers/sshd.js';
import { makeRepo, runOk, waitFor } from './util.js';

const SVC = path.join(REPO_ROOT, 'bin/svc.js');

describe.skipIf(!existsSync(SSHD))('a private repository over SSH (real sshd)', () => {
  let tmp: string;
  let sshd: Sshd;
  let dev: DevInstance;
  let hostRepo: string;
  let devTmp: string;
  const svc = (...args: string[]) => runOk(process.execPath, [SVC, ...args], dev.env);
  const kubectl = (...args: string[]) => runOk('kubectl', args, dev.env);
  const hostGit = (...args: string[]) => execFileSync('git', ['--git-dir', hostRepo, ...args], { encoding: 'utf8' }).trim();
  const condition = async (project: string, type: string) =>
    JSON.parse(await kubectl('get', 'project', project, '-o', `jsonpath={.status.conditions[?(@.type=="${type}")]}`) || '{}') as { status?: string; reason?: string; message?: string };
  /** The documented recipe (docs/repositories.md): a generic Secret from the key file and a known_hosts file. */
  const createSecret = (name: string, keyFile: string, knownHosts: string) => {
    const file = path.join(tmp, `${name}.known_hosts`);
    writeFileSync(file, knownHosts);
    return kubectl('create', 'secret', 'generic', name, `--from-file=ssh-privatekey=${keyFile}`, `--from-file=known_hosts=${file}`);
  };

  beforeAll(async () => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'svc-ssh-journey-'));
    sshd = await startSshd();
    const work = path.join(tmp, 'work');
    mkdirSync(work);
    makeRepo(work, { 'README.md': '# over ssh\n', 'svc.yaml': 'svc_version: 2\ndefault_agent: build\nagents:\n  build:\n    workspace: branch\n' });
    hostRepo = path.join(tmp, 'host', 'demo.git');
    execFileSync('git', ['clone', '-q', '--bare', work, hostRepo]);

    // svc dev's own HOME has the right key and host key in ~/.ssh: they must never be used
    const home = path.join(tmp, 'home');
    mkdirSync(path.join(home, '.ssh'), { recursive: true, mode: 0o700 });
    writeFileSync(path.join(home, '.ssh', 'id_ed25519'), sshd.userKey.privateKey, { mode: 0o600 });
    writeFileSync(path.join(home, '.ssh', 'known_hosts'), sshd.knownHosts);
    // where the operator and the API put their temporary key files, to see them gone
    devTmp = path.join(tmp, 'dev-tmp');
    mkdirSync(devTmp);

    // the agent's engine: commit, push through the gateway, open a CR; then serve as the fixture engine
    const { fixtureEngine } = await buildArtifacts();
    const script = [
      'if [ ! -f "$HOME/pushed" ]; then',
      '  echo "from the agent" > agent.txt && git add agent.txt',
      '  git -c user.name=agent -c user.email=agent@example.com commit -q -m "Add agent.txt"',
      '  git push -q origin HEAD 2> "$HOME/push.err" && svc cr open --title "Agent over SSH" > "$HOME/cr.out" 2>&1',
      '  touch "$HOME/pushed"',
      'fi',
      `exec '${process.execPath}' '${fixtureEngine}' --port "$1"`,
    ].join('\n');
    dev = await startDev({
      dataDir: path.join(tmp, 'dev'),
      args: ['--engine-command', `/bin/sh -c '${script.replaceAll("'", "'\\''")}' engine {port}`],
      extraEnv: { HOME: home, TMPDIR: devTmp },
      timeoutMs: 90_000,
    });
  }, 150_000);

  afterAll(async () => {
    await dev?.stop();
    await sshd?.close();
    cleanupArtifacts();
    if (tmp) removeDevDir(tmp);
  }, 60_000);

  it('fetches the mirror, pushes the session branch, relays the agent\'s push through the gateway and merges its CR', async () => {
    await createSecret('demo-ssh', sshd.userKey.file, sshd.knownHosts);
    await svc('projects', 'create', 'demo', '--repo', sshd.url(hostRepo), '--credentials-secret', 'demo-ssh');
    // the mirror fetched over SSH: Ready at the host's main
    await waitFor('project demo Ready', async () => (await condition('demo', 'Ready')).status === 'True', 90_000)
      .catch(async (error: Error) => { throw new Error(`${error.message}\n${JSON.stringify(await condition('demo', 'RepositoryReachable'))}\nsshd:\n${sshd.log().slice(-3000)}`); });
    expect(await kubectl('get', 'project', 'demo', '-o', 'jsonpath={.status.defaultBranchSha}')).toBe(hostGit('rev-parse', 'main'));
    expect(JSON.parse(await svc('projects', 'show', 'demo', '--json'))).toMatchObject({ credentials_secret: 'demo-ssh' });

    const started = JSON.parse(await svc('sessions', 'start', '--project', 'demo', '--prompt', 'add agent.txt', '--json')) as any;
    const id = (started.session ?? started).id as string;
    // the agent's CR: its commit is on the host's session branch, pushed through the gateway over SSH
    const cr = await waitFor('the agent\'s change request', async () => {
      const list = JSON.parse(await svc('cr', 'ls', '--project', 'demo', '--status', 'all', '--json')) as any[];
      return list.find((c) => c.head_ref === id && c.head_commit_sha);
    }, 120_000).catch(async (error: Error) => { throw new Error(`${error.message}\n${await svc('sessions', 'show', id, '--project', 'demo')}\n${dev.output().slice(-3000)}`); });
    expect(cr).toMatchObject({ title: 'Agent over SSH', status: 'open', base_ref: 'main' });
    expect(hostGit('rev-parse', id)).toBe(cr.head_commit_sha);
    expect(hostGit('log', '-1', '--format=%s', id)).toBe('Add agent.txt');

    const merged = await svc('cr', 'merge', String(cr.number), '--project', 'demo');
    expect(merged).toMatch(/^Merged CR #\d+ into main at [0-9a-f]{12} \(fast-forward\)\./);
    expect(hostGit('show', 'main:agent.txt')).toBe('from the agent');
    await svc('sessions', 'stop', id, '--project', 'demo');
  }, 300_000);

  it('a wrong host key: HostKeyVerificationFailed, with git\'s words and the key the host sent', async () => {
    const impostor = generateKey(tmp, 'impostor-host');
    await createSecret('badhost-ssh', sshd.userKey.file, knownHostsLine(sshd.port, impostor.publicKey));
    await svc('projects', 'create', 'badhost', '--repo', sshd.url(hostRepo), '--credentials-secret', 'badhost-ssh');
    const reach = await waitFor('badhost unreachable', async () => { const c = await condition('badhost', 'RepositoryReachable'); return c.status === 'False' && c; }, 90_000);
    expect(reach.reason).toBe('HostKeyVerificationFailed');
    expect(reach.message).toMatch(/Host key verification failed; the host sent the ED25519 key SHA256:\S+ \(the host's SSH key is not one of the known_hosts of the credentials Secret\)/);
    expect((await condition('badhost', 'Ready')).status).toBe('False');
    const described = await kubectl('describe', 'project', 'badhost');
    expect(described).toContain('HostKeyVerificationFailed');
    expect(described).not.toContain('PRIVATE KEY');

    // a session there cannot get its branch: the same words in its reason's message
    const started = JSON.parse(await svc('sessions', 'start', '--project', 'badhost', '--json')) as any;
    const id = (started.session ?? started).id as string;
    const ready = await waitFor('the session failed', async () => {
      const session = JSON.parse(await kubectl('get', 'session', id, '-o', 'json')) as any;
      return session.status?.status === 'failed' && session.status.conditions.find((c: any) => c.type === 'Ready');
    }, 90_000);
    expect(ready.reason).toBe('HostKeyVerificationFailed'); // the Project's own classification, not a generic one
    expect(ready.message).toMatch(/could not create the session branch in .*: repository .* is unreachable: Host key verification failed/);
    // where people look: `svc sessions show` says which failure and git's words, no key material
    const shown = await svc('sessions', 'show', id, '--project', 'badhost');
    expect(shown).toContain(`Status:    failed (HostKeyVerificationFailed)\nMessage:   ${ready.message}\n`);
    expect(shown).not.toContain('PRIVATE KEY');
  }, 120_000);

  it('a key the host does not accept: AuthenticationFailed (Permission denied), never falling back to ~/.ssh', async () => {
    const stranger = generateKey(tmp, 'stranger');
    chmodSync(stranger.file, 0o600);
    await createSecret('badkey-ssh', stranger.file, sshd.knownHosts);
    await svc('projects', 'create', 'badkey', '--repo', sshd.url(hostRepo), '--credentials-secret', 'badkey-ssh');
    const reach = await waitFor('badkey unreachable', async () => { const c = await condition('badkey', 'RepositoryReachable'); return c.status === 'False' && c; }, 90_000);
    expect(reach.reason).toBe('AuthenticationFailed');
    expect(reach.message).toContain(`${sshd.user}@127.0.0.1: Permission denied (publickey) (the host refused the credentials)`);
    expect(JSON.stringify(reach)).not.toContain(stranger.privateKey.split('\n')[1]!);
  }, 120_000);

  it('a Secret with a key but no known_hosts is refused before any connection', async () => {
    await kubectl('create', 'secret', 'generic', 'nohosts-ssh', `--from-file=ssh-privatekey=${sshd.userKey.file}`);
    await svc('projects', 'create', 'nohosts', '--repo', sshd.url(hostRepo), '--credentials-secret', 'nohosts-ssh');
    const reach = await waitFor('nohosts refused', async () => { const c = await condition('nohosts', 'RepositoryReachable'); return c.status === 'False' && c; }, 90_000);
    expect(reach).toMatchObject({ reason: 'CredentialsNotFound', message: expect.stringMatching(/has ssh-privatekey but no known_hosts/) });
  }, 120_000);

  it('no key file is left behind by the operator or the API', async () => {
    await waitFor('no temporary SSH directories', async () => readdirSync(devTmp).filter((f) => f.startsWith('svc-ssh-')).length === 0, 30_000);
  });
});
