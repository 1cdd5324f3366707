// Bundles svc-agent with esbuild into dist/daemon/svc-agent.mjs (run by `make build` after tsc):
// one file instead of the hundreds its dependencies are made of, which a session's start waits
// for (svc-agent boots on that path). Next to the tsc output so that the credential helper
// (dist/daemon/credential-helper.js) is where the daemon looks for it. bin/svc-agent.js falls back
// to the tsc output when the bundle is missing or older.
import { build } from 'esbuild';

await build({
  entryPoints: [new URL('./main.ts', import.meta.url).pathname],
  outfile: new URL('../dist/daemon/svc-agent.mjs', import.meta.url).pathname,
  bundle: true,
  minify: true,
  sourcemap: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // CommonJS dependencies call require() for node built-ins.
  banner: { js: "import { createRequire as __svcCreateRequire } from 'node:module'; const require = __svcCreateRequire(import.meta.url);" },
  logLevel: 'warning',
});
