import { describe, expect, it } from 'vitest';
import { gitCredentialsFromSecret } from './git-credentials.js';

describe('gitCredentialsFromSecret', () => {
  it('ssh-privatekey with known_hosts is an SSH identity', () => {
    expect(gitCredentialsFromSecret('s', 'ns', { 'ssh-privatekey': 'KEY', known_hosts: 'host ssh-ed25519 AAA' }))
      .toEqual({ ok: true, credentials: { sshPrivateKey: 'KEY', knownHosts: 'host ssh-ed25519 AAA' } });
  });

  it('ssh-privatekey without known_hosts is refused with how to get them (host keys are always checked)', () => {
    const lookup = gitCredentialsFromSecret('repo-ssh', 'ns', { 'ssh-privatekey': 'KEY' });
    expect(lookup).toEqual({ ok: false, message: expect.stringMatching(/^the git credentials Secret repo-ssh has ssh-privatekey but no known_hosts: .*ssh-keyscan/) });
    expect(JSON.stringify(lookup)).not.toContain('KEY');
  });

  it('password or token for https, with their default user names', () => {
    expect(gitCredentialsFromSecret('s', 'ns', { password: 'pw' })).toEqual({ ok: true, credentials: { username: 'git', password: 'pw' } });
    expect(gitCredentialsFromSecret('s', 'ns', { token: 't', username: 'bot' })).toEqual({ ok: true, credentials: { username: 'bot', password: 't' } });
    expect(gitCredentialsFromSecret('s', 'ns', { token: 't' })).toEqual({ ok: true, credentials: { username: 'x-access-token', password: 't' } });
  });

  it('says what is missing', () => {
    expect(gitCredentialsFromSecret('s', 'ns', null)).toEqual({ ok: false, message: 'the git credentials Secret s does not exist in namespace ns' });
    expect(gitCredentialsFromSecret('s', 'ns', { user: 'x' })).toEqual({ ok: false, message: 'the git credentials Secret s has none of ssh-privatekey (with known_hosts), password or token' });
  });
});
