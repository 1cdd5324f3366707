// Runs the whole vitest suite and ends with one plain line "N passed, N failed[, N skipped]"
// computed from vitest's JSON results, so CI can read the outcome in any language.
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';

const resultsFile = '.vitest-results.json';
rmSync(resultsFile, { force: true });
const run = spawnSync(
  'npx',
  ['--no-install', 'vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${resultsFile}`, ...process.argv.slice(2)],
  { stdio: 'inherit' },
);
let results;
try {
  results = JSON.parse(readFileSync(resultsFile, 'utf8'));
} catch (err) {
  console.error(`could not read test results: ${err.message}`);
  process.exit(run.status || 1);
}
// Every failure in a few lines, last: vitest prints each one in full, but a CI log that keeps
// only its tail showed the last failure alone (a first one was its cause). A file that failed
// with no failed test (its beforeAll threw, it did not load) is a failure of its own.
const failures = (results.testResults ?? []).flatMap((file) => {
  const name = path.relative(process.cwd(), file.name);
  const failed = (file.assertionResults ?? []).filter((t) => t.status === 'failed').map((t) => ({ name: `${name} > ${t.fullName}`, message: t.failureMessages?.[0] }));
  return failed.length || file.status !== 'failed' ? failed : [{ name, message: file.message }];
});
const summary = {
  passed: results.numPassedTests,
  failed: Math.max(results.numFailedTests + (results.numRuntimeErrorTestSuites ?? 0), failures.length),
  skipped: results.numPendingTests + results.numTodoTests,
};
if (failures.length > 0) {
  console.log(`\nFailed (${failures.length}):`);
  for (const failure of failures.slice(0, 10)) {
    console.log(`- ${failure.name}`);
    const first = stripVTControlCharacters(failure.message ?? '').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('at ')).slice(0, 3).join(' / ');
    if (first) console.log(`  ${first.slice(0, 300)}`);
  }
}
const parts = [`${summary.passed} passed`, `${summary.failed} failed`];
if (summary.skipped > 0) parts.push(`${summary.skipped} skipped`);
console.log(parts.join(', '));
process.exit(run.status ?? 1);
