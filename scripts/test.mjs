// Runs the whole vitest suite and ends with one plain line "N passed, N failed[, N skipped]"
// computed from vitest's JSON results, so CI can read the outcome in any language.
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';

const resultsFile = '.vitest-results.json';
rmSync(resultsFile, { force: true });
const run = spawnSync(
  'npx',
  ['--no-install', 'vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${resultsFile}`, ...process.argv.slice(2)],
  { stdio: 'inherit' },
);
let summary;
try {
  const results = JSON.parse(readFileSync(resultsFile, 'utf8'));
  summary = {
    passed: results.numPassedTests,
    failed: results.numFailedTests + (results.numRuntimeErrorTestSuites ?? 0),
    skipped: results.numPendingTests + results.numTodoTests,
  };
} catch (err) {
  console.error(`could not read test results: ${err.message}`);
  process.exit(run.status || 1);
}
const parts = [`${summary.passed} passed`, `${summary.failed} failed`];
if (summary.skipped > 0) parts.push(`${summary.skipped} skipped`);
console.log(parts.join(', '));
process.exit(run.status ?? 1);
