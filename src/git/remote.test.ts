import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { InvalidRemoteError, UnreachableError } from './errors.js';
import { parseRemote, remoteInvocation, unreachableFrom, withRemoteInvocation } from './remote.js';

describe('parseRemote', () => {
  it('moves http userinfo into the credentials, decoded', () => {
    expect(parseRemote('https://bot:p%40ss@git.example.com/org/repo.git')).toEqual({
      url: 'https://git.example.com/org/repo.git',
      displayUrl: 'https://git.example.com/org/repo.git',
      credentials: { username: 'bot', password: 'p@ss' },
    });
  });
  it('explicit credentials win over userinfo', () => {
    expect(parseRemote('https://a:b@h/r.git', { username: 'u', password: 'p' }).credentials).toEqual({ username: 'u', password: 'p' });
  });
  it('keeps local paths, file:// and ssh remotes as given', () => {
    expect(parseRemote('/srv/git/r.git').url).toBe('/srv/git/r.git');
    expect(parseRemote('file:///srv/git/r.git').url).toBe('file:///srv/git/r.git');
    expect(parseRemote('git@github.com:org/r.git').url).toBe('git@github.com:org/r.git');
    expect(parseRemote('ssh://git@host/r.git').credentials).toBeNull();
  });
  it.each(['relative/r.git', '-u x', 'ftp://h/r.git', 'ssh://u:secret@h/r.git', 'https://u:%zz@h/r.git', 'https://h/r.git\n'])('refuses %j without echoing secrets', (url) => {
    const error = (() => { try { parseRemote(url); } catch (e) { return e; } })();
    expect(error).toBeInstanceOf(InvalidRemoteError);
    expect((error as Error).message).not.toContain('secret');
  });
});

describe('remoteInvocation', () => {
  it('clears configured helpers and passes values only through the environment', () => {
    const invocation = remoteInvocation(parseRemote('https://h/r.git', { username: 'bot-user', password: 'hunter22' }));
    expect(invocation.configArgs[0]).toBe('-c');
    expect(invocation.configArgs[1]).toBe('credential.helper=');
    expect(invocation.configArgs.join(' ')).not.toContain('hunter22');
    expect(invocation.env).toEqual({ SVC_GIT_USERNAME: 'bot-user', SVC_GIT_PASSWORD: 'hunter22' });
    expect(invocation.secrets).toEqual(['hunter22', 'bot-user']);
    expect(remoteInvocation(parseRemote('/srv/r.git'))).toEqual({ configArgs: ['-c', 'credential.helper='], env: {}, secrets: [] });
  });
});

describe('SSH credentials', () => {
  const KEY = '-----BEGIN OPENSSH PRIVATE KEY-----\r\nb3BlbnNzaC1rZXktdjEAAAAA\r\n-----END OPENSSH PRIVATE KEY-----';
  const ssh = { sshPrivateKey: KEY, knownHosts: '[git.example]:2222 ssh-ed25519 AAAAC3Nz' };

  it('go with ssh URLs only, and Basic credentials with http(s) only', () => {
    expect(parseRemote('ssh://git@git.example:2222/r.git', ssh).credentials).toBe(ssh);
    expect(parseRemote('git@git.example:org/r.git', ssh).credentials).toBe(ssh);
    expect(() => parseRemote('https://git.example/r.git', ssh)).toThrow(/holds an SSH key .* works only with an ssh:\/\/ or user@host:path URL/);
    expect(() => parseRemote('ssh://git@git.example/r.git', { username: 'u', password: 'p' })).toThrow(/holds a password or token, which works only with an http\(s\) URL/);
    expect(() => parseRemote('ssh://git@git.example/r.git', { ...ssh, sshPrivateKey: 'not a key' })).toThrow(/ssh-privatekey is not a private key/);
    expect(() => parseRemote('ssh://git@git.example/r.git', { ...ssh, knownHosts: ' \n' })).toThrow(/known_hosts is empty: host keys are always checked/);
  });

  it('reach git as an ssh command with this key and these host keys only, in private files removed afterwards', async () => {
    let seen: { dir: string; env: Record<string, string> } | undefined;
    const result = await withRemoteInvocation(parseRemote('ssh://git@git.example:2222/r.git', ssh), async ({ env, configArgs }) => {
      const command = env.GIT_SSH_COMMAND!;
      const keyFile = /IdentityFile='([^']+)'/.exec(command)![1]!;
      const knownHostsFile = /UserKnownHostsFile='([^']+)'/.exec(command)![1]!;
      expect(path.dirname(keyFile)).toBe(path.dirname(knownHostsFile));
      expect(statSync(path.dirname(keyFile)).mode & 0o777).toBe(0o700);
      expect(statSync(keyFile).mode & 0o777).toBe(0o600);
      // CRLF made LF, the final newline OpenSSH needs
      expect(readFileSync(keyFile, 'utf8')).toBe(`${KEY.replaceAll('\r\n', '\n')}\n`);
      expect(readFileSync(knownHostsFile, 'utf8')).toBe(`${ssh.knownHosts}\n`);
      for (const option of ['-F /dev/null', 'IdentitiesOnly=yes', 'IdentityAgent=none', 'StrictHostKeyChecking=yes', 'GlobalKnownHostsFile=/dev/null', 'BatchMode=yes', 'PasswordAuthentication=no']) {
        expect(command).toContain(option);
      }
      expect(command).not.toContain('b3BlbnNzaC1rZXktdjEAAAAA'); // the key is in a file, never in the command line
      expect(configArgs).toEqual(['-c', 'credential.helper=']);
      seen = { dir: path.dirname(keyFile), env };
      return 'done';
    });
    expect(result).toBe('done');
    expect(existsSync(seen!.dir)).toBe(false);
    // also when the command fails
    let dir = '';
    await expect(withRemoteInvocation(parseRemote('ssh://git@git.example/r.git', ssh), async ({ env }) => {
      dir = path.dirname(/IdentityFile='([^']+)'/.exec(env.GIT_SSH_COMMAND!)![1]!);
      throw new Error('boom');
    })).rejects.toThrow('boom');
    expect(existsSync(dir)).toBe(false);
  });

  it('an ssh URL without credentials is refused: never the machine\'s keys or agent', async () => {
    await expect(withRemoteInvocation(parseRemote('ssh://git@git.example/r.git'), async () => 'ran')).rejects.toThrow(/needs a credentials Secret with ssh-privatekey and known_hosts/);
  });
});

describe('unreachableFrom: git\'s real error, classified', () => {
  const remote = parseRemote('ssh://git@git.example:2222/r.git', { sshPrivateKey: '-----BEGIN OPENSSH PRIVATE KEY-----\nx\n-----END OPENSSH PRIVATE KEY-----', knownHosts: 'h k v' });
  const BANNER = '@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@\n@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @\n@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@\nIT IS POSSIBLE THAT SOMEONE IS DOING SOMETHING NASTY!\nSomeone could be eavesdropping on you right now (man-in-the-middle attack)!\nIt is also possible that a host key has just been changed.\nThe fingerprint for the ED25519 key sent by the remote host is\nSHA256:krZpbQM5UA7coSpmatf/vj58VHZ2tQL3kaYNdVgVYf0.\nPlease contact your system administrator.\nAdd correct host key in /tmp/svc-ssh-x/known_hosts to get rid of this message.\nOffending ED25519 key in /tmp/svc-ssh-x/known_hosts:1\nHost key for [git.example]:2222 has changed and you have requested strict checking.\nHost key verification failed.\nfatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\nand the repository exists.\n';
  it.each([
    ['a changed host key', BANNER, 'HostKeyVerificationFailed', "Host key verification failed; the host sent the ED25519 key SHA256:krZpbQM5UA7coSpmatf/vj58VHZ2tQL3kaYNdVgVYf0 (the host's SSH key is not one of the known_hosts of the credentials Secret)"],
    ['an unknown host key', 'No ED25519 host key is known for [git.example]:2222 and you have requested strict checking.\nHost key verification failed.\nfatal: Could not read from remote repository.\n', 'HostKeyVerificationFailed', "No ED25519 host key is known for [git.example]:2222 and you have requested strict checking; Host key verification failed (the host's SSH key is not one of the known_hosts of the credentials Secret)"],
    ['a refused key', 'git@git.example: Permission denied (publickey).\nfatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\nand the repository exists.\n', 'AuthenticationFailed', 'git@git.example: Permission denied (publickey) (the host refused the credentials)'],
    ['a missing repository', "fatal: '/srv/nope.git' does not appear to be a git repository\nfatal: Could not read from remote repository.\n", 'RepositoryNotFound', "'/srv/nope.git' does not appear to be a git repository"],
    ['an https 404', "remote: Repository not found.\nfatal: repository 'https://git.example/r.git/' not found\n", 'RepositoryNotFound', "Repository not found; repository 'https://git.example/r.git/' not found"],
    ['a closed port', 'ssh: connect to host git.example port 2222: Connection refused\nfatal: Could not read from remote repository.\n', 'HostUnreachable', 'ssh: connect to host git.example port 2222: Connection refused'],
  ])('%s', (_what, stderr, kind, detail) => {
    const error = unreachableFrom(stderr, remote)!;
    expect(error).toBeInstanceOf(UnreachableError);
    expect(error.kind).toBe(kind);
    expect(error.detail).toBe(detail);
    expect(error.message).toBe(`repository ${remote.displayUrl} is unreachable: ${detail}`);
  });
});
