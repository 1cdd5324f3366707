// POST /svc/env: the runtime environment for the engine's next start.
// Body: {"env": {"NAME": "value" | null}} (null removes a name set earlier).
import type { ControlResult } from './server.js';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/**
 * Names a caller may not set (docs/daemon.md): the daemon's own (HOME, ENGINE_CONFIG_DIR, every
 * OPENCODE_*), the loaders' (they run code in the engine before it starts) and keys that mean
 * something to JavaScript objects. SVC_* is refused separately.
 */
const BLOCKED_NAMES = new Set(['HOME', 'ENGINE_CONFIG_DIR', 'LD_PRELOAD', 'LD_LIBRARY_PATH', 'LD_AUDIT', 'NODE_OPTIONS', '__PROTO__', 'CONSTRUCTOR', 'PROTOTYPE']);
const BLOCKED_PREFIXES = ['OPENCODE_', 'BUN_'];

function blocked(name: string): boolean {
  const upper = name.toUpperCase();
  return BLOCKED_NAMES.has(upper) || BLOCKED_PREFIXES.some((prefix) => upper.startsWith(prefix)) || /^__.*__$/.test(name);
}
const MAX_VALUE = 32 * 1024;

export class RuntimeEnv {
  private readonly values = new Map<string, string>();

  entries(): Record<string, string> {
    return Object.fromEntries(this.values);
  }

  names(): string[] {
    return [...this.values.keys()].sort();
  }

  /** Validates the whole update first; applies nothing when any entry is bad. */
  update(body: unknown): ControlResult {
    const env = (body as { env?: unknown } | null)?.env;
    if (typeof env !== 'object' || env === null || Array.isArray(env)) {
      return { status: 400, body: { error: 'body must be {"env": {"NAME": "value" | null}}' } };
    }
    const problems: string[] = [];
    for (const [name, value] of Object.entries(env as Record<string, unknown>)) {
      if (!ENV_NAME.test(name)) problems.push(`${JSON.stringify(name)} is not a valid environment variable name`);
      else if (name.toUpperCase().startsWith('SVC_')) problems.push(`${name}: SVC_ names are reserved`);
      else if (blocked(name)) problems.push(`${name} may not be set through /svc/env (daemon-owned, loader or reserved name; see docs/daemon.md)`);
      else if (value !== null && typeof value !== 'string') problems.push(`${name}: value must be a string or null`);
      else if (typeof value === 'string' && (value.length > MAX_VALUE || value.includes('\0'))) problems.push(`${name}: value too long or contains NUL`);
    }
    if (problems.length > 0) return { status: 400, body: { error: 'invalid environment update', issues: problems } };
    for (const [name, value] of Object.entries(env as Record<string, string | null>)) {
      if (value === null) this.values.delete(name);
      else this.values.set(name, value);
    }
    return { status: 200, body: { names: this.names(), applies: 'at the next engine start (POST /svc/refresh restarts it)' } };
  }
}
