import { defineConfig } from 'vitest/config';

// Unit tests live beside the code (*.test.ts); integration tests in test/.
export default defineConfig({
  test: {
    include: ['eslint-rules/**/*.test.ts', 'src/**/*.test.ts', 'controllers/**/*.test.ts', 'daemon/**/*.test.ts', 'test/**/*.test.ts', 'web/**/*.test.ts'],
    exclude: ['node_modules/**', 'dist/**'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
