// An event stream relayed to a person stays open while its source is quiet: an idle engine sends
// nothing for minutes, and the client's fetch (undici: 300 s without a byte) or a proxy between
// (nginx: 60 s) cut it. A comment line (": keepalive") is what SSE keeps for this: every reader
// ignores it. It is written only between events, never inside one a source is still sending.
import { Transform, type TransformCallback } from 'node:stream';

/** How often a relayed event stream is checked for quiet: a reader never waits 2× this for a byte. */
export const SSE_KEEPALIVE_MS = 15_000;

const COMMENT = Buffer.from(': keepalive\n\n');

/** True when `tail` (the last bytes of a stream) ends with a blank line: CRLF CRLF, LF LF or CR CR. */
function endsEvent(tail: Buffer): boolean {
  const text = tail.toString('latin1'); // \r and \n never occur inside a UTF-8 sequence
  return text.endsWith('\n\n') || text.endsWith('\r\r') || text.endsWith('\r\n\r\n');
}

/** Passes an SSE stream through unchanged, adding a comment after each `intervalMs` of quiet that falls between events. */
export class SseKeepalive extends Transform {
  /** The last bytes passed on (an event's end may span chunks); a blank line at the start: no event is open. */
  private tail = Buffer.from('\n\n');
  private quiet = true;
  private readonly timer: NodeJS.Timeout;

  constructor(intervalMs = SSE_KEEPALIVE_MS) {
    super();
    this.timer = setInterval(() => {
      if (this.quiet && endsEvent(this.tail)) this.push(COMMENT);
      this.quiet = true;
    }, intervalMs);
    this.timer.unref();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    if (chunk.length > 0) {
      this.quiet = false;
      this.tail = Buffer.concat([this.tail, chunk.subarray(-4)]).subarray(-4);
    }
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    clearInterval(this.timer);
    callback();
  }

  override _destroy(error: Error | null, callback: (error: Error | null) => void): void {
    clearInterval(this.timer);
    callback(error);
  }
}
