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
    expect(redactUrls('x1git+ssh://u:p@h/r ftp://a@b?c=1&token;=t&sig?=s')).toBe('x1git+ssh://***@h/r ftp://***@b?c=1&token;=***&sig?=***');
  });

  it('redacts what the regular expressions it replaces redacted, on 10,000 random texts of URL characters', () => {
    // the earlier implementation (quadratic on long runs), kept here as the reference
    const reference = (text: string) => text
      .replace(/([a-z][a-z0-9+.-]*:\/\/)[^/@\s?#]*@/gi, '$1***@')
      .replace(/([?&;])([^=&#\s'"]+)=([^&#\s'"]*)/g, (all: string, sep: string, name: string, value: string) =>
        /token|secret|passw|pwd|auth|key|sig|credential|session|code/i.test(name) && value !== '' ? `${sep}${name}=***` : all);
    const alphabet = ['a', 'Z', '1', '+', '.', '-', ':', '/', '://', '@', '?', '#', '&', ';', '=', ' ', '\n', "'", 'http', 'token', 'sig'];
    let seed = 7;
    const random = (n: number) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
    for (let i = 0; i < 10_000; i++) {
      const text = Array.from({ length: 1 + random(24) }, () => alphabet[random(alphabet.length)]).join('');
      const expected = reference(text);
      expect(redactUrls(text), JSON.stringify(text)).toBe(expected);
    }
  });

  it('takes time linear in the text: long runs that start a scheme or a parameter name at every character', () => {
    for (const text of ['a'.repeat(200_000), `a://${'a'.repeat(200_000)}`, ';a'.repeat(100_000), '?x'.repeat(100_000), `?${'a'.repeat(200_000)}`]) {
      expect(redactUrls(text)).toBe(text);
    }
    expect(redactUrls(`${'a1'.repeat(100_000)}://u:p@h`)).toBe(`${'a1'.repeat(100_000)}://***@h`);
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
