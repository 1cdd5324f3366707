// Parses `git diff --raw --numstat -z --no-renames` output into per-file entries.

import type { DiffFile, FileStatus } from '../lib/rest-shapes.js';

export type { DiffFile, FileStatus } from '../lib/rest-shapes.js';

const RAW_HEADER = /^:\d{6} \d{6} [0-9a-f]+ [0-9a-f]+ ([A-Z])\d*$/;
const NUMSTAT = /^(\d+|-)\t(\d+|-)\t/;

function statusOf(letter: string): FileStatus {
  if (letter === 'A') return 'added';
  if (letter === 'D') return 'deleted';
  return 'modified'; // M, and T (type change, e.g. file to symlink)
}

/** Raw entries come first (header token, path token), then one numstat token per entry, same order. */
export function parseRawNumstat(output: string): DiffFile[] {
  const tokens = output.split('\0');
  const files: DiffFile[] = [];
  let i = 0;
  for (; i + 1 < tokens.length; i += 2) {
    const header = RAW_HEADER.exec(tokens[i]!);
    if (!header) break;
    files.push({ path: tokens[i + 1]!, status: statusOf(header[1]!), additions: 0, deletions: 0, binary: false });
  }
  for (const file of files) {
    const stat = NUMSTAT.exec(tokens[i++] ?? '');
    if (!stat) throw new Error(`unexpected git diff --numstat output for ${file.path}`);
    if (stat[1] === '-') file.binary = true;
    else {
      file.additions = Number(stat[1]);
      file.deletions = Number(stat[2]);
    }
  }
  return files;
}
