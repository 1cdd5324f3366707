#!/usr/bin/env node
// Runs svc-agent: the esbuild bundle (dist/daemon/svc-agent.mjs, fast start: a session waits for
// it) when it is at least as new as the tsc output, else the tsc output (a plain `tsc` build).
import { statSync } from 'node:fs';

const bundle = new URL('../dist/daemon/svc-agent.mjs', import.meta.url);
const compiled = new URL('../dist/daemon/main.js', import.meta.url);
const mtime = (url) => statSync(url, { throwIfNoEntry: false })?.mtimeMs;
const bundleTime = mtime(bundle);
const compiledTime = mtime(compiled);
await import(bundleTime !== undefined && (compiledTime === undefined || bundleTime >= compiledTime) ? bundle.href : compiled.href);
