import { describe, expect, it } from 'vitest';
// @ts-expect-error plain JS module without types
import { areaOf, violation } from './fences.js';

describe('import fences (DESIGN.md §5)', () => {
  it.each([
    ['src/manifest/schema.ts', 'src/manifest'],
    ['controllers/project/reconcile.ts', 'controllers/project'],
    ['daemon/main.ts', 'daemon'],
    ['test/x.test.ts', null],
  ])('%s is in area %s', (file, area) => expect(areaOf(file)).toBe(area));

  it.each([
    ['daemon', { area: 'src/kube' }, true],
    ['daemon', { area: 'src/lib' }, false],
    ['daemon', { package: '@kubernetes/client-node' }, true],
    ['src/runtime', { package: '@kubernetes/client-node' }, true],
    ['src/kube', { package: '@kubernetes/client-node' }, false],
    ['controllers/project', { area: 'controllers/session' }, true],
    ['controllers/project', { area: 'src/git' }, false],
    ['controllers/project', { area: 'src/api' }, true],
    ['src/api', { area: 'controllers/project' }, true],
    ['src/resources', { area: 'src/manifest' }, true],
    ['src/manifest', { package: 'zod' }, false],
    ['src/git', { area: 'src/kube' }, true],
  ])('%s importing %o is a violation: %s', (from, target, bad) => {
    expect(violation(from, target) !== null).toBe(bad);
  });
});
