// `svc dev --sandbox-mount HOST_PATH[:ro|:rw]` (DESIGN.md §8.1): a host path shown at the same
// path inside every sandbox, read-only unless `:rw`, for caches and fixture engines. svc's data
// directory can never be mounted: not itself, nothing inside it, nothing that contains it.
import { realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import type { SandboxMount } from './index.js';

export class SandboxMountError extends Error {}

/** Whether `inner` is `outer` or below it (both absolute, resolved). */
function within(inner: string, outer: string): boolean {
  const rel = path.relative(outer, inner);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** Parses and checks one --sandbox-mount value against the data directory. */
export function parseSandboxMount(value: string, dataDir: string): SandboxMount {
  const m = /^(.*?)(?::(ro|rw))?$/.exec(value.trim());
  const given = m?.[1] ?? '';
  if (!given) throw new SandboxMountError(`--sandbox-mount needs a path, e.g. /var/cache/pip or /var/cache/pip:rw; got ${JSON.stringify(value)}`);
  let data: string;
  try { data = realpathSync(path.resolve(dataDir)); } catch { data = path.resolve(dataDir); }
  const refuse = () => new SandboxMountError(`--sandbox-mount ${given}: svc's data directory (${data}) holds the admin token and every project's files and can never be shown to a sandbox, nor can a folder inside it or around it`);
  // as written, then as resolved (symlinks)
  if (within(path.resolve(given), data) || within(data, path.resolve(given)) || within(path.resolve(given), path.resolve(dataDir))) throw refuse();
  let resolved: string;
  try {
    resolved = realpathSync(path.resolve(given));
    statSync(resolved);
  } catch {
    throw new SandboxMountError(`--sandbox-mount ${given}: no such file or directory`);
  }
  if (within(resolved, data) || within(data, resolved)) throw refuse();
  if (resolved !== path.resolve(given)) {
    // a symlink: shown where the sandbox will look for it, the given path
    return { path: path.resolve(given), source: resolved, writable: m?.[2] === 'rw' };
  }
  return { path: resolved, writable: m?.[2] === 'rw' };
}

/** SVC_SANDBOX_MOUNTS (JSON, what svc dev hands the operator) as mounts. */
export function mountsFromEnv(raw: string | undefined): SandboxMount[] {
  if (!raw?.trim()) return [];
  const parsed = JSON.parse(raw) as unknown;
  if (!Array.isArray(parsed) || !parsed.every((m) => typeof m?.path === 'string' && path.isAbsolute(m.path) && typeof m.writable === 'boolean')) {
    throw new Error('SVC_SANDBOX_MOUNTS must be a JSON list of { "path": absolute path, "writable": boolean }');
  }
  return parsed as SandboxMount[];
}
