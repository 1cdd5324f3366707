// Parses `git diff --raw --numstat -z --no-renames` output into per-file entries.

import { StringDecoder } from 'node:string_decoder';
import type { DiffFile, FileStatus } from '../lib/rest-shapes.js';

export type { DiffFile, FileStatus } from '../lib/rest-shapes.js';

const RAW_HEADER = /^:\d{6} \d{6} [0-9a-f]+ [0-9a-f]+ ([A-Z])\d*$/;
const NUMSTAT = /^(\d+|-)\t(\d+|-)\t/;

function statusOf(letter: string): FileStatus {
  if (letter === 'A') return 'added';
  if (letter === 'D') return 'deleted';
  return 'modified'; // M, and T (type change, e.g. file to symlink)
}

/** The most files a diff lists (as GitHub does): the rest are counted in its totals, not listed. */
export const MAX_DIFF_FILES = 3000;

/**
 * `git diff --raw --numstat -z` read as git writes it (the raw entries first, a header token and a
 * path token each, then one numstat token per entry, in the same order): the first `maxFiles`
 * files listed, every file counted in the totals. An agent's commit of 800,000 files was 109 MiB
 * of output, held and listed whole.
 */
export class DiffFileCollector {
  private readonly files: DiffFile[] = [];
  private readonly decoder = new StringDecoder('utf8');
  private partial = '';
  private status: FileStatus | null = null;
  private raw = true;
  private count = 0;
  private counted = 0;
  private additions = 0;
  private deletions = 0;

  constructor(private readonly maxFiles = MAX_DIFF_FILES) {}

  push(chunk: Buffer): void {
    const tokens = (this.partial + this.decoder.write(chunk)).split('\0');
    this.partial = tokens.pop()!;
    for (const token of tokens) this.token(token);
  }

  /** The files listed, how many there were in all, and the totals of all of them. */
  end(): { files: DiffFile[]; total: number; additions: number; deletions: number } {
    const rest = this.partial + this.decoder.end();
    if (rest) this.token(rest);
    if (this.counted < this.count) throw new Error(`unexpected git diff --numstat output: ${this.count} files, ${this.counted} counts`);
    return { files: this.files, total: this.count, additions: this.additions, deletions: this.deletions };
  }

  private token(token: string): void {
    if (this.raw) {
      if (this.status !== null) {
        if (this.count < this.maxFiles) this.files.push({ path: token, status: this.status, additions: 0, deletions: 0, binary: false, truncated: false });
        this.count++;
        this.status = null;
        return;
      }
      const header = RAW_HEADER.exec(token);
      if (header) {
        this.status = statusOf(header[1]!);
        return;
      }
      this.raw = false;
    }
    if (this.counted >= this.count) return; // the empty token after the last one
    const stat = NUMSTAT.exec(token);
    const file = this.files[this.counted];
    if (!stat) throw new Error(`unexpected git diff --numstat output for ${file?.path ?? `file ${this.counted + 1}`}`);
    this.counted++;
    if (stat[1] === '-') {
      if (file) file.binary = true;
      return;
    }
    const additions = Number(stat[1]);
    const deletions = Number(stat[2]);
    this.additions += additions;
    this.deletions += deletions;
    if (file) {
      file.additions = additions;
      file.deletions = deletions;
    }
  }
}
