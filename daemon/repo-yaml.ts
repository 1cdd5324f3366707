// YAML from the session's branch (svc.yaml, the front matter of agent files), read by svc-agent at
// every engine start, on the loop that answers health and proxies the engine: leniently (a
// duplicate key is the manifest check's business; yaml's own check compares each key with every
// key before it, and 8,000 keys took seconds) and only from files up to 1 MiB.
import { readFileSync, statSync } from 'node:fs';
import YAML from 'yaml';

export const REPO_FILE_MAX_BYTES = 1024 * 1024;

/** A file's text, or null when it is larger than REPO_FILE_MAX_BYTES (throws when unreadable). */
export function readRepoFile(file: string): string | null {
  return statSync(file).size > REPO_FILE_MAX_BYTES ? null : readFileSync(file, 'utf8');
}

/** The YAML document of `text` (a repeated key: the last one counts). */
export function parseRepoYaml(text: string): unknown {
  return YAML.parse(text, { uniqueKeys: false });
}
