// A warm sandbox (docs/sandboxes.md "Warm sandboxes"): svc-agent started and loaded ahead of its
// session, waiting for the session's settings on its stdin, a pipe from the operator (never
// argv, a file or anything the sandbox can reach).
import { closeSync, openSync, writeSync } from 'node:fs';
import { ENV_RESERVE, RESERVE_ENTRY_BYTES, warmOnly } from '../src/lib/warm-sandbox.js';
import { statFields } from '../src/lib/proc.js';

/** At most this much: settings are a few KiB; anything bigger is not the operator's. */
const MAX_SETTINGS_BYTES = 1024 * 1024;

/**
 * The settings written to `input` (one JSON object of names to strings, then end of input), or
 * null when it ends with nothing: the operator went away before a session came.
 */
export async function readWarmSettings(input: NodeJS.ReadableStream): Promise<Record<string, string> | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of input) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    size += buffer.length;
    if (size > MAX_SETTINGS_BYTES) throw new Error('warm sandbox settings: more than 1 MiB');
    chunks.push(buffer);
  }
  if (size === 0) return null;
  const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('warm sandbox settings: not an object');
  const settings: Record<string, string> = {};
  for (const [name, value] of Object.entries(parsed)) {
    // what setenv(3) takes
    if (!/^[^=\0]+$/.test(name) || typeof value !== 'string' || value.includes('\0')) throw new Error(`warm sandbox settings: bad entry ${JSON.stringify(name)}`);
    settings[name] = value;
  }
  return settings;
}

/**
 * Makes `settings` this process's environment, as if it had been started with them: in
 * process.env (what its children inherit) and in the block the kernel shows as
 * /proc/<pid>/environ, rewritten in place within the room the warm environment kept
 * (src/lib/warm-sandbox.ts). Returns why the block could not be rewritten, or null.
 */
export function takeWarmSettings(settings: Record<string, string>): string | null {
  const block = environBlock();
  // every variable set anew: libc's pointers then lead to copies, not to the block rewritten below
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined) process.env[name] = value;
  for (const name of Object.keys(process.env)) if (warmOnly(name)) delete process.env[name];
  Object.assign(process.env, settings);
  if (block === null) return 'no /proc/self/stat';
  const entries = Buffer.from(Object.entries(process.env).map(([name, value]) => `${name}=${value}\0`).join(''));
  const room = block.size - entries.length;
  if (room < RESERVE_ENTRY_BYTES) return `the session's environment (${entries.length} bytes) is larger than the room kept (${block.size})`;
  const rest = Buffer.from(`${ENV_RESERVE}=${'.'.repeat(room - RESERVE_ENTRY_BYTES)}\0`);
  try {
    const fd = openSync('/proc/self/mem', 'r+');
    try {
      writeSync(fd, Buffer.concat([entries, rest]), 0, block.size, block.start);
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    return (error as Error).message;
  }
  return null;
}

/** Where this process's environment block is (proc(5): env_start and env_end, fields 50 and 51). */
function environBlock(): { start: number; size: number } | null {
  const fields = statFields('self');
  if (!fields) return null;
  const start = Number(fields[50 - 3]);
  const end = Number(fields[51 - 3]);
  return Number.isSafeInteger(start) && end > start ? { start, size: end - start } : null;
}
