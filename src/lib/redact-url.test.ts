import { describe, expect, it } from 'vitest';
import { redactUrls, urlCarriesCredential } from './redact-url.js';

describe('redactUrls', () => {
  it('redacts userinfo and credential-like query parameters anywhere in a text', () => {
    expect(redactUrls("fatal: unable to access 'https://bob:hunter22@git.example.com/r.git/'")).toBe("fatal: unable to access 'https://***@git.example.com/r.git/'");
    expect(redactUrls('https://gitlab.example/g/r.git?private_token=glpat-SECRET&ref=main')).toBe('https://gitlab.example/g/r.git?private_token=***&ref=main');
    expect(redactUrls('see https://h/r.git?ref=x&token=abc#frag and http://h/x?access_token=t1')).toBe('see https://h/r.git?ref=x&token=***#frag and http://h/x?access_token=***');
    expect(redactUrls('https://h/r.git?X-Amz-Signature=deadbeef&api_key=k')).toBe('https://h/r.git?X-Amz-Signature=***&api_key=***');
    expect(redactUrls('https://h/r.git?ref=main&page=2')).toBe('https://h/r.git?ref=main&page=2');
    expect(redactUrls('git@github.com:o/r.git and /srv/repo.git')).toBe('git@github.com:o/r.git and /srv/repo.git');
  });
});

describe('urlCarriesCredential', () => {
  it('is true for passwords, http userinfo and credential query parameters only', () => {
    for (const url of ['https://u:p@h/r.git', 'https://ghp_token@h/r.git', 'https://h/r.git?private_token=x', 'http://h/r?token=y', 'ssh://git:pw@h/r']) {
      expect(urlCarriesCredential(url), url).toBe(true);
    }
    for (const url of ['https://h/r.git', 'ssh://git@h/r.git', 'git@github.com:o/r.git', '/srv/repo.git', 'file:///srv/r.git', 'https://h/r.git?ref=main']) {
      expect(urlCarriesCredential(url), url).toBe(false);
    }
  });
});
