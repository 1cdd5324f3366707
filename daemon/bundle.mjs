// Bundles svc-agent with esbuild into dist/daemon/svc-agent.mjs (run by `make build` after tsc):
// one file instead of the hundreds its dependencies are made of, which a session's start waits
// for (svc-agent boots on that path). Next to the tsc output so that the credential helper
// (dist/daemon/credential-helper.js) is where the daemon looks for it. bin/svc-agent.js falls back
// to the tsc output when the bundle is missing or older.
import { rmSync } from 'node:fs';
import { build } from 'esbuild';
import { NODE_BUNDLE } from '../src/lib/node-bundle.mjs';

const outdir = new URL('../dist/daemon/', import.meta.url).pathname;
// what is loaded later (import()) goes to chunks of its own: not even parsed before it is needed
rmSync(`${outdir}svc-agent-chunks`, { recursive: true, force: true });
await build({
  ...NODE_BUNDLE,
  entryPoints: { 'svc-agent': new URL('./main.ts', import.meta.url).pathname },
  outdir,
  outExtension: { '.js': '.mjs' },
  splitting: true,
  chunkNames: 'svc-agent-chunks/[name]-[hash]',
  minify: true,
});
