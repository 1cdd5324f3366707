// Caps a unified patch as git streams it (docs/git.md, Diff limits): each file's part at
// `maxFileBytes`, the whole at `maxTotalBytes`, cut at line boundaries. Files are counted by their
// `diff --git ` header lines, which come in the same order as `--raw` lists them.
import { StringDecoder } from 'node:string_decoder';

export interface PatchLimits {
  /** Largest part of the patch one file may take (default 512 KiB). */
  maxFileBytes: number;
  /** Largest whole patch (default 4 MiB). */
  maxTotalBytes: number;
}

export const DEFAULT_PATCH_LIMITS: PatchLimits = { maxFileBytes: 512 * 1024, maxTotalBytes: 4 * 1024 * 1024 };

const FILE_HEADER = 'diff --git ';

export class PatchLimiter {
  /** Indexes (in patch order) of the files whose part was cut. */
  readonly truncated = new Set<number>();
  /** True once the total cap was reached: every later file is cut entirely. */
  full = false;
  /** The file at which the total cap was reached (later ones may never be seen when git is stopped). */
  fullAt = -1;
  private file = -1;
  private fileBytes = 0;
  private totalBytes = 0;
  /** The incomplete last line, in pieces (joined once it ends: each chunk is searched once). */
  private held: string[] = [];
  private heldLength = 0;
  /** Set when the held line grew past maxFileBytes: it fits no file's part, so only its start is kept. */
  private overlong: string | null = null;
  private readonly decoder = new StringDecoder('utf8');

  constructor(private readonly limits: PatchLimits) {}

  /** The part of `chunk` (plus any line left over from before) that fits; '' once full. */
  push(chunk: Buffer): string {
    const text = this.decoder.write(chunk);
    const last = text.lastIndexOf('\n');
    if (last < 0) {
      this.hold(text);
      return '';
    }
    const first = text.indexOf('\n') + 1;
    const out = this.finishHeld(text.slice(0, first)) + this.lines(text.slice(first, last + 1));
    this.hold(text.slice(last + 1));
    return out;
  }

  /** What is left at the end of git's output. */
  end(): string {
    return this.finishHeld(this.decoder.end());
  }

  private hold(text: string): void {
    if (!text || this.overlong !== null) return;
    this.held.push(text);
    this.heldLength += text.length;
    if (this.heldLength > this.limits.maxFileBytes) {
      this.overlong = this.held.join('').slice(0, FILE_HEADER.length);
      this.held = [];
      this.heldLength = 0;
    }
  }

  /** The held line, ended by `tail`: counted as any line, or, when overlong, only marking its file cut. */
  private finishHeld(tail: string): string {
    const overlong = this.overlong;
    if (overlong !== null) {
      this.overlong = null;
      // longer than a file's part: cut whatever else happens (lines() would find the same)
      if (overlong.startsWith(FILE_HEADER)) this.startFile();
      this.truncated.add(this.file);
      return '';
    }
    const line = this.held.join('') + tail;
    this.held = [];
    this.heldLength = 0;
    return line ? this.lines(line) : '';
  }

  private startFile(): void {
    this.file++;
    this.fileBytes = 0;
  }

  private lines(text: string): string {
    let out = '';
    let start = 0;
    while (start < text.length) {
      const newline = text.indexOf('\n', start);
      const stop = newline < 0 ? text.length : newline + 1;
      const line = text.slice(start, stop);
      start = stop;
      if (line.startsWith(FILE_HEADER)) this.startFile();
      if (this.full) { this.truncated.add(this.file); continue; }
      const size = Buffer.byteLength(line);
      if (this.fileBytes + size > this.limits.maxFileBytes) { this.truncated.add(this.file); continue; }
      if (this.totalBytes + size > this.limits.maxTotalBytes) {
        this.full = true;
        this.fullAt = this.file;
        this.truncated.add(this.file);
        continue;
      }
      this.fileBytes += size;
      this.totalBytes += size;
      out += line;
    }
    return out;
  }
}
