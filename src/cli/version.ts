// The package version, read from the nearest package.json named svc (works from dist/ and from a bundle).
import { readFileSync } from 'node:fs';

export function packageVersion(): string {
  let dir = new URL('.', import.meta.url);
  for (let depth = 0; depth < 6; depth++) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'svc' && pkg.version) return pkg.version;
    } catch { /* not here: look one level up */ }
    dir = new URL('..', dir);
  }
  return 'unknown';
}
