// Reads the `-z` output of `git diff --raw --numstat --no-renames` and `git merge-tree --name-only`
// as git writes it, keeping a bounded list of paths and counting the rest.

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

/** The most conflicting paths a merge preview lists; the rest are counted (conflicts_omitted). */
export const MAX_LISTED_CONFLICTS = 3000;

/** `-z` output read as it arrives: each NUL-terminated token to `token`, a partial one kept for the next chunk. */
abstract class NulTokenReader {
  private readonly decoder = new StringDecoder('utf8');
  private partial = '';

  push(chunk: Buffer): void {
    const tokens = (this.partial + this.decoder.write(chunk)).split('\0');
    this.partial = tokens.pop()!;
    for (const token of tokens) this.token(token);
  }

  /** The last token, when the output did not end with a NUL. */
  protected flush(): void {
    const rest = this.partial + this.decoder.end();
    this.partial = '';
    if (rest) this.token(rest);
  }

  protected abstract token(token: string): void;
}

/**
 * `git diff --raw --numstat -z` read as git writes it (the raw entries first, a header token and a
 * path token each, then one numstat token per entry, in the same order): the first `maxFiles`
 * files listed, every file counted in the totals. An agent's commit of 800,000 files was 109 MiB
 * of output, held and listed whole.
 */
export class DiffFileCollector extends NulTokenReader {
  private readonly files: DiffFile[] = [];
  private status: FileStatus | null = null;
  private raw = true;
  private count = 0;
  private counted = 0;
  private additions = 0;
  private deletions = 0;

  constructor(private readonly maxFiles = MAX_DIFF_FILES) {
    super();
  }

  /** The files listed, how many there were in all, and the totals of all of them. */
  end(): { files: DiffFile[]; total: number; additions: number; deletions: number } {
    this.flush();
    if (this.counted < this.count) throw new Error(`unexpected git diff --numstat output: ${this.count} files, ${this.counted} counts`);
    return { files: this.files, total: this.count, additions: this.additions, deletions: this.deletions };
  }

  protected token(token: string): void {
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

/**
 * `git merge-tree --write-tree --name-only -z --no-messages` read as git writes it: the merged
 * tree, then each conflicting path once. The first `maxPaths` are listed, all are counted: an
 * agent's branch could conflict in every one of 800,000 files.
 */
export class ConflictCollector extends NulTokenReader {
  private tree: string | null = null;
  private readonly paths: string[] = [];
  private count = 0;

  constructor(private readonly maxPaths = MAX_LISTED_CONFLICTS) {
    super();
  }

  end(): { tree: string | null; paths: string[]; total: number } {
    this.flush();
    return { tree: this.tree, paths: this.paths, total: this.count };
  }

  protected token(token: string): void {
    if (token === '') return; // the section separator
    if (this.tree === null) {
      this.tree = token;
      return;
    }
    if (this.count < this.maxPaths) this.paths.push(token);
    this.count++;
  }
}
