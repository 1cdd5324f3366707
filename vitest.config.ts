import { defineConfig } from 'vitest/config';

// Unit tests live beside the code (*.test.ts); integration tests in test/.
export default defineConfig({
  test: {
    include: ['eslint-rules/**/*.test.ts', 'src/**/*.test.ts', 'controllers/**/*.test.ts', 'daemon/**/*.test.ts', 'test/**/*.test.ts', 'web/**/*.test.ts'],
    exclude: ['node_modules/**', 'dist/**'],
    // kubectl without gcloud's dispatcher in front of it, where the machine has one
    globalSetup: ['test/helpers/global-setup.ts'],
    pool: 'forks',
    // Two test files at once, also on two cores (vitest's default there is one): the integration
    // tests mostly wait on processes, git and timers, so the suite takes about 15 min instead of
    // 23 (docs/development.md, "Tests").
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // The in-process API, operator and git tests use repositories on this machine, as `svc dev`
    // does; the tests of the refusal start their processes without it.
    env: { SVC_ALLOW_LOCAL_REPOS: '1' },
  },
});
