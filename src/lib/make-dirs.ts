// `mkdir -p` that cannot spin: Node's recursive mkdirSync loops forever when a directory on the
// way was deleted while still in use (EEXIST for it, ENOENT for anything made in it). That is
// what a sandbox's folder removed under a booting svc-agent looks like from inside: the process
// spun at full speed, orphaned, for half an hour of a CI run.
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';

/** Makes `dir` and its missing parents, each once (with `mode`); throws what mkdir says when one cannot be made. */
export function makeDirs(dir: string, mode?: number): void {
  const missing: string[] = [];
  for (let at = path.resolve(dir); !existsSync(at); at = path.dirname(at)) {
    missing.unshift(at);
    if (path.dirname(at) === at) break;
  }
  for (const each of missing) {
    try {
      mkdirSync(each, mode === undefined ? undefined : { mode });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
}
