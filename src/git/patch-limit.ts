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
  private partial = '';
  private readonly decoder = new StringDecoder('utf8');

  constructor(private readonly limits: PatchLimits) {}

  /** The part of `chunk` (plus any line left over from before) that fits; '' once full. */
  push(chunk: Buffer): string {
    const text = this.partial + this.decoder.write(chunk);
    const end = text.lastIndexOf('\n') + 1;
    this.partial = text.slice(end);
    return this.lines(text.slice(0, end));
  }

  /** What is left at the end of git's output. */
  end(): string {
    const rest = this.partial + this.decoder.end();
    this.partial = '';
    return rest ? this.lines(rest) : '';
  }

  private lines(text: string): string {
    let out = '';
    let start = 0;
    while (start < text.length) {
      const newline = text.indexOf('\n', start);
      const stop = newline < 0 ? text.length : newline + 1;
      const line = text.slice(start, stop);
      start = stop;
      if (line.startsWith('diff --git ')) {
        this.file++;
        this.fileBytes = 0;
      }
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
