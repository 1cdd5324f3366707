// Bundles the CLI with esbuild into dist/cli/svc.mjs (run by `make build` after tsc):
// one file per lazily imported command module instead of hundreds of node_modules files,
// which keeps start-up under 3× `node -e ''`. bin/svc.js falls back to the tsc output.
import { rmSync } from 'node:fs';
import { build } from 'esbuild';
import { NODE_BUNDLE } from '../lib/node-bundle.mjs';

const outdir = new URL('../../dist/cli', import.meta.url).pathname;
rmSync(outdir, { recursive: true, force: true });
await build({
  ...NODE_BUNDLE,
  entryPoints: [new URL('./main.ts', import.meta.url).pathname],
  splitting: true,
  minify: true,
  outdir,
  entryNames: 'svc',
  chunkNames: 'chunks/[name]-[hash]',
  outExtension: { '.js': '.mjs' },
});
