import { describe, expect, it } from 'vitest';
import type { ApiError } from '../errors.js';
import { enginePath } from './engine-path.js';

function status(target: string): number {
  try {
    enginePath(target);
    return 200;
  } catch (error) {
    return (error as ApiError).status;
  }
}

describe('enginePath', () => {
  it.each([
    '/', '/event', '/session', '/session/ses_1/prompt_async', '/session/', '/file?path=a/b/../c', '/find?pattern=%2Fsvc%2Fenv',
    '/fixture/env', '/session/a%20b', '/svcx/env', '/services', '/proxyish',
  ])('passes %s unchanged', (target) => {
    expect(enginePath(target)).toBe(target);
  });

  it.each([
    ['/svc/env', 403], ['/svc/abort', 403], ['/svc', 403], ['/svc?x=1', 403], ['/SVC/env', 403], ['/Svc/abort', 403],
    ['/%73vc/env', 403], ['/%53%56%43/abort', 403], ['/proxy/3000/', 403], ['/PROXY/3000', 403],
    ['//svc/env', 400], ['/./svc/env', 400], ['/x/../svc/env', 400], ['/%2e%2e/svc/env', 400], ['/%2E/svc', 400],
    ['/%2fsvc/env', 400], ['/a%2F..%2Fsvc', 400], ['/\\svc/env', 400], ['/%5csvc/env', 400], ['/%zz', 400],
    ['/x%00/svc', 400], ['svc/env', 400], ['http://host/svc/env', 400],
  ])('refuses %s with %i', (target, expected) => {
    expect(status(target)).toBe(expected);
  });
});
