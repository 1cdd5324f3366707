import { describe, expect, it } from 'vitest';
import { InvalidRemoteError } from './errors.js';
import { parseRemote, remoteInvocation } from './remote.js';

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
