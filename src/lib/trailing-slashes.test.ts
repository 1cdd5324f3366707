import { expect, it } from 'vitest';
import { withoutTrailingSlashes } from './trailing-slashes.js';

it.each([
  ['http://h/v1/', 'http://h/v1'], ['/api//', '/api'], ['///', ''], ['', ''], ['a/b', 'a/b'],
  [`/${'/'.repeat(100_000)}x`, `/${'/'.repeat(100_000)}x`], [`x${'/'.repeat(100_000)}`, 'x'],
])('%#: takes the trailing slashes off', (text, expected) => {
  expect(withoutTrailingSlashes(text)).toBe(expected);
});
