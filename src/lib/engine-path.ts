// Where the engine binary is: the pinned opencode of the opencode-ai package this checkout
// installed (package.json), found through the package itself rather than PATH, so `svc dev`
// runs the same engine whether it was started by `make dev`, `node bin/svc.js dev` or npx
// (whose PATH alone holds node_modules/.bin). The sandbox image, which installs opencode-ai
// globally, falls back to PATH.
import { accessSync, constants, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/** The npm package of the default engine, pinned in package.json. */
export const ENGINE_PACKAGE = 'opencode-ai';
/** The default engine's command name (the first word of svc-agent's default engine command). */
export const ENGINE_NAME = 'opencode';

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The opencode binary of the installed opencode-ai package, or null when it is not installed (or its binary is missing). */
export function pinnedEngineBinary(): string | null {
  let manifestPath: string;
  try {
    manifestPath = createRequire(import.meta.url).resolve(`${ENGINE_PACKAGE}/package.json`);
  } catch {
    return null;
  }
  try {
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { bin?: string | Record<string, string> };
    const bin = typeof manifest.bin === 'string' ? manifest.bin : manifest.bin?.[ENGINE_NAME];
    if (!bin) return null;
    const file = path.resolve(path.dirname(manifestPath), bin);
    return isExecutable(file) ? file : null;
  } catch {
    return null;
  }
}

/** `name` looked up on `searchPath` as a shell would (a name with a slash is taken as a path). */
export function findExecutable(name: string, searchPath = process.env.PATH ?? ''): string | null {
  if (name.includes('/')) return isExecutable(name) ? path.resolve(name) : null;
  for (const dir of searchPath.split(path.delimiter)) {
    if (!dir) continue;
    const file = path.join(dir, name);
    if (isExecutable(file)) return file;
  }
  return null;
}

/**
 * The engine command with a bare `opencode` replaced by the pinned binary when it is installed;
 * any other command (an absolute path, a fixture engine, `node ...`) is left as given.
 */
export function resolveEngineCommand(words: readonly string[], pinned: () => string | null = pinnedEngineBinary): string[] {
  const [first, ...rest] = words;
  if (first !== ENGINE_NAME) return [...words];
  return [pinned() ?? first, ...rest];
}
