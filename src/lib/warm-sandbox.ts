// What the process provider and a warm svc-agent agree on (docs/sandboxes.md "Warm sandboxes"):
// svc-agent started and loaded ahead of its session, in an environment that says so and keeps
// room for the session's settings, which then come on its stdin.

/** Set (to "stdin") in a warm sandbox's environment: its settings come on stdin. */
export const WARM_SETTINGS = 'SVC_AGENT_SETTINGS';

/**
 * Names of the variables that keep room in a warm svc-agent's environment block: once its
 * settings come, svc-agent writes its whole environment there, so that `/proc/<pid>/environ`
 * shows what a sandbox started for its session shows (ps, and whatever finds a session's
 * processes by SVC_SESSION_ID, read it there). What is left of the room stays one such variable.
 */
export const ENV_RESERVE = 'SVC_ENV_RESERVE';

/** Three of 120 KiB (Linux caps one variable at 128 KiB; a prompt may be about that long). */
const RESERVE = Array.from({ length: 3 }, (_, i) => [`${ENV_RESERVE}_${i}`, '.'.repeat(120 * 1024)] as const);

/** Whether `name` exists only while a sandbox waits (gone once its settings came). */
export function warmOnly(name: string): boolean {
  return name === WARM_SETTINGS || name.startsWith(ENV_RESERVE);
}

/** The environment of a warm sandbox whose sandboxes have `base` in common. */
export function warmEnvironment(base: Record<string, string>): Record<string, string> {
  return { ...base, [WARM_SETTINGS]: 'stdin', ...Object.fromEntries(RESERVE) };
}

/** Bytes of an environment block (`NAME=value\0` each, UTF-8), as the kernel keeps it. */
export function environBytes(env: Record<string, string>): number {
  let size = 0;
  for (const [name, value] of Object.entries(env)) size += Buffer.byteLength(`${name}=${value}`) + 1;
  return size;
}

/** The smallest room left after an environment rewritten in place: one `SVC_ENV_RESERVE=` entry. */
export const RESERVE_ENTRY_BYTES = ENV_RESERVE.length + 2;

/** Whether a sandbox whose whole environment is `env` fits the block of a warm one made from `base`. */
export function fitsWarm(base: Record<string, string>, env: Record<string, string>): boolean {
  return environBytes(env) + RESERVE_ENTRY_BYTES <= environBytes(warmEnvironment(base));
}
