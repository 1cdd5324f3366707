import { describe, expect, it } from 'vitest';
import { redact } from './redact.js';

describe('redact', () => {
  it('removes userinfo from URLs and the given secret values', () => {
    expect(redact("fatal: unable to access 'https://bob:hunter22@git.example.com/r.git/'"))
      .toBe("fatal: unable to access 'https://***@git.example.com/r.git/'");
    expect(redact('token=abcd1234 in text', ['abcd1234'])).toBe('token=*** in text');
    expect(redact('no secrets here', [''])).toBe('no secrets here');
  });
});
