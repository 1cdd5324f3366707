// A JSON file replaced whole: written beside it, then renamed over it, so a reader (another
// process, one after a crash) sees the old content or the new, never a part.
import { rename, writeFile } from 'node:fs/promises';

/** Writes `value` to `file` (mode 0600) by a rename over it. */
export async function writeJsonReplacing(file: string, value: unknown): Promise<void> {
  await writeFile(`${file}.tmp`, JSON.stringify(value), { mode: 0o600 });
  await rename(`${file}.tmp`, file);
}
