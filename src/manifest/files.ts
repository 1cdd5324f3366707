// Finding and reading the manifest of a repository directory on disk.
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { checkManifest, MANIFEST_MAX_BYTES, manifestTooLarge, type ManifestCheck } from './check.js';
import { MANIFEST_FILES, type ManifestFileName, encodingOf } from './parse.js';

/** The manifest file of `dir` in lookup order (svc.yaml, then svc.toml), or undefined. */
export function findManifestFile(dir: string): ManifestFileName | undefined {
  return MANIFEST_FILES.find((name) => {
    try {
      return statSync(path.join(dir, name)).isFile();
    } catch {
      return false;
    }
  });
}

/** Reads and checks a manifest file; the encoding comes from its extension. Throws when unreadable. */
export function checkManifestFile(file: string): ManifestCheck {
  const encoding = encodingOf(file);
  if (!encoding) throw new Error(`${file}: cannot tell the encoding: a manifest file ends in .yaml, .yml or .toml`);
  const name = encoding === 'toml' ? 'svc.toml' : 'svc.yaml';
  const { size } = statSync(file);
  if (size > MANIFEST_MAX_BYTES) return manifestTooLarge(name, size); // not read
  return checkManifest(name, readFileSync(file, 'utf8'));
}
