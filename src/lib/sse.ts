// Server-sent event streams, split into their events: the model gateway's usage tap, svc-agent
// reading its engine's events, `svc sessions logs`. One splitter for the three, linear in the
// stream and bounded: only the new text of a chunk is searched for an event's end (plus the 3
// characters before it), an incomplete event is kept in pieces and joined once, and an event past
// `maxChars` is given up (its text is handed on unread, as it comes, to whoever passes the stream on).

/** An event ends at a blank line: CRLF CRLF, LF LF or CR CR. */
const EVENT_ENDS = /\r\n\r\n|\n\n|\r\r/g;

/** The most of one event kept in memory by default (characters). */
export const MAX_SSE_EVENT_CHARS = 16 * 1024 * 1024;

/** A complete event's text (up to and with its blank line), or text of an event too large to keep. */
export type SsePiece = { event: string } | { unread: string };

export class SseSplitter {
  private readonly decoder = new TextDecoder();
  /** The incomplete event so far (unless skipping it). */
  private pending: string[] = [];
  private pendingLength = 0;
  /** The last characters of the incomplete event: its end may begin there. */
  private tail = '';
  /** Inside an event past maxChars: handed on as it comes, up to its end. */
  private skipping = false;
  /** Events given up for their size. */
  skipped = 0;

  constructor(private readonly maxChars = MAX_SSE_EVENT_CHARS) {}

  /** What this chunk completes, in stream order. */
  push(chunk: Uint8Array | string): SsePiece[] {
    const text = this.tail + (typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true }));
    const pieces: SsePiece[] = [];
    let eventStart = 0; // where the incomplete event begins in `text` (its tail, when it has one)
    let from = this.tail.length; // the first character not handled yet
    for (;;) {
      EVENT_ENDS.lastIndex = eventStart;
      const m = EVENT_ENDS.exec(text);
      if (!m) break;
      // no end lies wholly in the tail (it was searched with the text before it)
      const end = m.index + m[0].length;
      this.take(text.slice(from, end), true, pieces);
      eventStart = from = end;
    }
    this.tail = text.slice(Math.max(eventStart, text.length - 3));
    if (from < text.length) this.take(text.slice(from), false, pieces);
    return pieces;
  }

  /** The end of the stream: an incomplete last event counts as complete. */
  end(): SsePiece[] {
    const pieces: SsePiece[] = [];
    this.take(this.decoder.decode(), true, pieces);
    this.tail = '';
    return pieces;
  }

  private take(piece: string, complete: boolean, pieces: SsePiece[]): void {
    if (this.skipping) {
      if (complete) this.skipping = false;
      if (piece) pieces.push({ unread: piece });
      return;
    }
    this.pending.push(piece);
    this.pendingLength += piece.length;
    if (complete) {
      const event = this.pending.length === 1 ? this.pending[0]! : this.pending.join('');
      this.pending = [];
      this.pendingLength = 0;
      if (event) pieces.push({ event });
      return;
    }
    if (this.pendingLength <= this.maxChars) return;
    pieces.push({ unread: this.pending.join('') });
    this.pending = [];
    this.pendingLength = 0;
    this.skipping = true;
    this.skipped += 1;
  }
}

/** The data of an event (its `data:` lines joined by newlines), null without any. */
export function sseData(event: string): string | null {
  const data: string[] = [];
  for (const line of event.split(/\r\n|\n|\r/)) {
    if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
  }
  return data.length > 0 ? data.join('\n') : null;
}

/** The data of each complete event among `pieces` that has any (what a reader of the stream wants). */
export function* eventData(pieces: Iterable<SsePiece>): Generator<string> {
  for (const piece of pieces) {
    const data = 'event' in piece ? sseData(piece.event) : null;
    if (data !== null) yield data;
  }
}
