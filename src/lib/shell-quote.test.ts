import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { shellQuote, shellUnquote } from './shell-quote.js';

describe('shellQuote', () => {
  it.each(['plain', "it's", "'", "''a'b''", 'a b', '$HOME `id` "x" \\ ;|&', ''])('sh reads %j back as it was, and so does shellUnquote', (word) => {
    expect(execFileSync('sh', ['-c', `printf %s ${shellQuote(word)}`], { encoding: 'utf8' })).toBe(word);
    expect(shellUnquote(shellQuote(word))).toBe(word);
  });

  it('shellUnquote refuses what is not quoted words', () => {
    expect(shellUnquote('a b')).toBeNull();
    expect(shellUnquote("'a")).toBeNull();
    expect(shellUnquote("'a'b")).toBeNull();
  });
});
