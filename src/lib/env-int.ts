/** An integer setting from the environment: `fallback` when unset, a clear error when out of range. */
export function envInt(name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER, env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be an integer >= ${min}${max < Number.MAX_SAFE_INTEGER ? ` and <= ${max}` : ''}, got ${JSON.stringify(raw)}`);
  }
  return value;
}
