import { describe, expect, it } from 'vitest';
import { splitWords } from './words.js';

describe('splitWords', () => {
  it.each([
    ['opencode serve --hostname 127.0.0.1 --port {port}', ['opencode', 'serve', '--hostname', '127.0.0.1', '--port', '{port}']],
    ["  node  '/a b/c.js'  ", ['node', '/a b/c.js']],
    ['node -e "process.exit(\\"3\\")"', ['node', '-e', 'process.exit("3")']],
    ['a\\ b c', ['a b', 'c']],
    ["x'y'\"z\"", ['xyz']],
    ["''", ['']],
    ['$HOME `id` ;|&', ['$HOME', '`id`', ';|&']],
    ['', []],
  ])('%j', (line, words) => {
    expect(splitWords(line)).toEqual(words);
  });

  it.each(["'open", '"open', 'end\\'])('refuses %j', (line) => {
    expect(() => splitWords(line)).toThrow();
  });
});
