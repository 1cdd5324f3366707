// What a process entry (dist/src/main/api.js, operator.js: what the chart and svc dev run) runs:
// the esbuild bundle of its composition root (src/main/bundle.mjs) when it is at least as new as
// the tsc output, else the tsc output (a plain `tsc` build, or the sources through tsx). The
// bundle starts with about a second of CPU less (docs/development.md "Bundled processes").
import { statSync } from 'node:fs';

export type ProcessRole = 'api' | 'operator';

/** The module `role`'s entry at `entryUrl` (its import.meta.url) runs. */
export function compositionRoot(entryUrl: string, role: ProcessRole): URL {
  const compiled = new URL(`./${role}-root${entryUrl.endsWith('.ts') ? '.ts' : '.js'}`, entryUrl);
  const bundle = new URL(`./${role}.bundle.mjs`, entryUrl);
  const mtime = (url: URL) => statSync(url, { throwIfNoEntry: false })?.mtimeMs;
  const bundleTime = mtime(bundle);
  const compiledTime = mtime(compiled);
  return bundleTime !== undefined && (compiledTime === undefined || bundleTime >= compiledTime) ? bundle : compiled;
}
