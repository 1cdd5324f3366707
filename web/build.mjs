// Bundles the dashboard (web/src) with esbuild into dist/web: index.html plus content-hashed
// assets with .br and .gz variants the API serves to clients that accept them (run by
// `make build`; docs/dashboard.md). Prints the compressed size of the first load.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const root = path.dirname(fileURLToPath(import.meta.url));

export async function buildDashboard(outdir = path.join(root, '../dist/web')) {
  rmSync(outdir, { recursive: true, force: true });
  const assetDir = path.join(outdir, 'assets');
  mkdirSync(assetDir, { recursive: true });
  const result = await build({
    entryPoints: [path.join(root, 'src/main.tsx')],
    bundle: true,
    minify: true,
    sourcemap: 'linked',
    format: 'esm',
    target: 'es2020',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    outdir: assetDir,
    entryNames: 'app-[hash]',
    metafile: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
  const outputs = Object.keys(result.metafile.outputs).map((file) => path.basename(file));
  const script = outputs.find((f) => f.endsWith('.js'));
  const style = outputs.find((f) => f.endsWith('.css'));
  if (!script || !style) throw new Error(`dashboard build: expected one .js and one .css output, got ${outputs.join(', ')}`);
  const html = readFileSync(path.join(root, 'index.html'), 'utf8').replace('%SCRIPT%', `assets/${script}`).replace('%STYLE%', `assets/${style}`);
  writeFileSync(path.join(outdir, 'index.html'), html);
  let firstLoad = gzipSync(html).length;
  for (const name of readdirSync(assetDir)) {
    if (name.endsWith('.map')) continue;
    const body = readFileSync(path.join(assetDir, name));
    const br = brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } });
    writeFileSync(path.join(assetDir, `${name}.br`), br);
    writeFileSync(path.join(assetDir, `${name}.gz`), gzipSync(body, { level: 9 }));
    firstLoad += br.length;
  }
  return { script, style, firstLoadBytes: firstLoad };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { firstLoadBytes } = await buildDashboard();
  process.stdout.write(`dashboard: dist/web, first load ${(firstLoadBytes / 1024).toFixed(1)} KB compressed\n`);
}
