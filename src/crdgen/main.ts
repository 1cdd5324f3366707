/**
 * `make generate`: writes crds/<plural>.yaml and charts/svc/crds/<plural>.yaml.
 * Usage: tsx src/crdgen/main.ts [outDir ...] (default: the two directories of the repository).
 * Files of a removed kind are deleted so that the directories hold exactly the generated set.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderAllCrds } from './crd.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const DEFAULT_OUT_DIRS = [path.join(repoRoot, 'crds'), path.join(repoRoot, 'charts/svc/crds')];

export function writeCrds(outDirs: string[]): string[] {
  const files = renderAllCrds();
  const written: string[] = [];
  for (const dir of outDirs) {
    mkdirSync(dir, { recursive: true });
    for (const stale of readdirSync(dir)) {
      if (stale.endsWith('.yaml') && !files.has(stale)) rmSync(path.join(dir, stale));
    }
    for (const [name, content] of files) {
      writeFileSync(path.join(dir, name), content);
      written.push(path.join(dir, name));
    }
  }
  return written;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const written = writeCrds(args.length ? args.map((d) => path.resolve(d)) : DEFAULT_OUT_DIRS);
  for (const file of written) console.log(`wrote ${path.relative(process.cwd(), file)}`);
}
