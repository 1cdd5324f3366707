import { defineConfig } from 'vitest/config';

const EXCLUDE = ['node_modules/**', 'dist/**'];
const UNIT = ['eslint-rules/**/*.test.ts', 'src/**/*.test.ts', 'controllers/**/*.test.ts', 'daemon/**/*.test.ts', 'web/**/*.test.ts'];
// Unit tests that mock a module (vi.mock): a module cached by another file would not be mocked.
const UNIT_OWN_FORK = ['src/main/data-dir-lock-nolinks.test.ts'];

// Unit tests live beside the code (*.test.ts); integration tests in test/.
export default defineConfig({
  test: {
    exclude: EXCLUDE,
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
    projects: [
      {
        extends: true,
        // Unit tests share their forks: a fork of its own per file was 150 s of the suite's CPU
        // against 43 (vitest's start and the imports). So a unit test leaves nothing behind:
        // timers real again, spies restored, series of its own in the process's metrics.
        test: { name: 'unit', include: UNIT, exclude: [...EXCLUDE, ...UNIT_OWN_FORK], isolate: false },
      },
      { extends: true, test: { name: 'isolated', include: ['test/**/*.test.ts', ...UNIT_OWN_FORK] } },
    ],
  },
});
