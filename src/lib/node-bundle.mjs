// The esbuild options every Node bundle of this repository shares (the CLI, svc-agent, the API and
// the operator): one ESM file for Node 20 whose CommonJS dependencies can still require() Node's
// built-ins.
export const NODE_BUNDLE = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: true,
  banner: { js: "import { createRequire as __svcCreateRequire } from 'node:module'; const require = __svcCreateRequire(import.meta.url);" },
  logLevel: 'warning',
};
