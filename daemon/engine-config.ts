// The engine config directory: `engine.config_dir` of the repository's manifest (svc.yaml, else
// the legacy svc.toml), else `.svc/engine`, resolved inside the workspace. Read at every engine
// start, so /svc/refresh applies a manifest edit.
import { existsSync, realpathSync } from 'node:fs';
import path from 'node:path';
import TOML from '@iarna/toml';
import { parseRepoYaml, readRepoFile, REPO_FILE_MAX_BYTES } from './repo-yaml.js';

export const DEFAULT_ENGINE_CONFIG_DIR = '.svc/engine';

function manifestConfigDir(workspace: string): unknown {
  const yamlPath = path.join(workspace, 'svc.yaml');
  const tomlPath = path.join(workspace, 'svc.toml');
  try {
    const file = existsSync(yamlPath) ? yamlPath : existsSync(tomlPath) ? tomlPath : undefined;
    const text = file ? readRepoFile(file) : undefined;
    if (text === null) throw new Error(`${path.basename(file!)} is larger than ${REPO_FILE_MAX_BYTES} bytes`);
    if (text === undefined) return undefined;
    const manifest = (file === yamlPath ? parseRepoYaml(text) : TOML.parse(text)) as { engine?: { config_dir?: unknown } } | null;
    return manifest?.engine?.config_dir;
  } catch (err) {
    // An unreadable manifest is the CR gate's business; the engine still starts with the default.
    process.stderr.write(`svc-agent: cannot read the manifest (${(err as Error).message}); using ${DEFAULT_ENGINE_CONFIG_DIR}\n`);
  }
  return undefined;
}

/** Absolute engine config dir; throws when the configured path escapes the workspace. */
export function resolveEngineConfigDir(workspace: string): string {
  const configured = manifestConfigDir(workspace);
  const relative = configured === undefined || configured === null ? DEFAULT_ENGINE_CONFIG_DIR : configured;
  if (typeof relative !== 'string' || relative === '' || relative.startsWith('/') || relative.split(/[\\/]/).includes('..')) {
    throw new Error(`engine.config_dir ${JSON.stringify(relative)} is not a safe relative path inside the workspace`);
  }
  const root = realpathSync(workspace);
  const resolved = path.resolve(root, relative);
  // a symlink inside the repository must not lead outside it either
  const real = existsSync(resolved) ? realpathSync(resolved) : resolved;
  if (real !== root && !real.startsWith(root + path.sep)) {
    throw new Error(`engine.config_dir ${JSON.stringify(relative)} resolves outside the workspace`);
  }
  return real;
}
