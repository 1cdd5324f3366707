// Bundles the API's and the operator's composition roots with esbuild into
// dist/src/main/api.bundle.mjs and operator.bundle.mjs (run by `make build` after tsc): one file
// each instead of the hundreds of modules they load, most of them @kubernetes/client-node's
// (docs/development.md "Bundled processes"). Beside the tsc output, so that what a root finds from
// its own address (the dashboard in dist/web, the package root, the manifest check's worker) is
// where it was; not minified, for stack traces a person reads in a log. entry.ts runs the tsc
// output when a bundle is missing or older.
import { build } from 'esbuild';
import { NODE_BUNDLE } from '../lib/node-bundle.mjs';

const here = (file) => new URL(file, import.meta.url).pathname;
await build({
  ...NODE_BUNDLE,
  entryPoints: { 'api.bundle': here('./api-root.ts'), 'operator.bundle': here('./operator-root.ts') },
  outdir: here('../../dist/src/main/'),
  outExtension: { '.js': '.mjs' },
});
