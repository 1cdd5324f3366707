// Bundles the CLI with esbuild into dist/cli/svc.mjs (run by `make build` after tsc):
// one file per lazily imported command module instead of hundreds of node_modules files,
// which keeps start-up under 3× `node -e ''`. bin/svc.js falls back to the tsc output.
import { rmSync } from 'node:fs';
import { build } from 'esbuild';

const outdir = new URL('../../dist/cli', import.meta.url).pathname;
rmSync(outdir, { recursive: true, force: true });
await build({
  entryPoints: [new URL('./main.ts', import.meta.url).pathname],
  bundle: true,
  splitting: true,
  minify: true,
  sourcemap: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  outdir,
  entryNames: 'svc',
  chunkNames: 'chunks/[name]-[hash]',
  outExtension: { '.js': '.mjs' },
  // CommonJS dependencies (commander, @iarna/toml) call require() for node built-ins.
  banner: { js: "import { createRequire as __svcCreateRequire } from 'node:module'; const require = __svcCreateRequire(import.meta.url);" },
  logLevel: 'warning',
});
