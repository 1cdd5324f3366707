#!/usr/bin/env node
// Runs the CLI: the esbuild bundle (dist/cli/svc.mjs, fast start) when it is at least as new as
// the tsc output, else the tsc output (dist/src/cli/main.js) so a plain `tsc` build works too.
import { statSync } from 'node:fs';

const bundle = new URL('../dist/cli/svc.mjs', import.meta.url);
const compiled = new URL('../dist/src/cli/main.js', import.meta.url);
const mtime = (url) => statSync(url, { throwIfNoEntry: false })?.mtimeMs;
const bundleTime = mtime(bundle);
const compiledTime = mtime(compiled);
await import(bundleTime !== undefined && (compiledTime === undefined || bundleTime >= compiledTime) ? bundle.href : compiled.href);
