// Fills a Session's waiting prompts to an exact size with kubectl, as a session that cannot run
// gathers them (the prompt route stops at PENDING_PROMPTS_MAX_BYTES; the annotation is too large
// for a command line, so it goes in a patch file).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PENDING_PROMPTS_ANNOTATION, type PendingPrompt } from '../../src/resources/index.js';
import { runOk } from '../dev/util.js';

/** Three waiting prompts whose annotation is `bytes` long in all (they fit under the bound when `bytes` does). */
export async function fillPendingPrompts(env: NodeJS.ProcessEnv, session: string, bytes: number): Promise<PendingPrompt[]> {
  const prompt = (i: number, text: string): PendingPrompt => ({ id: `waiting-${i}`, text, source: 'api', at: new Date().toISOString() });
  const overhead = Buffer.byteLength(JSON.stringify([0, 1, 2].map((i) => prompt(i, ''))));
  const each = Math.floor((bytes - overhead) / 3);
  const prompts = [prompt(0, 'w'.repeat(each)), prompt(1, 'w'.repeat(each)), prompt(2, 'w'.repeat(bytes - overhead - 2 * each))];
  const value = JSON.stringify(prompts);
  if (Buffer.byteLength(value) !== bytes) throw new Error(`the waiting prompts came to ${Buffer.byteLength(value)} bytes, not ${bytes}`);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-prompts-'));
  try {
    const file = path.join(dir, 'patch.json');
    writeFileSync(file, JSON.stringify({ metadata: { annotations: { [PENDING_PROMPTS_ANNOTATION]: value } } }));
    await runOk('kubectl', ['patch', 'session', session, '--type=merge', '--patch-file', file], env);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return prompts;
}
