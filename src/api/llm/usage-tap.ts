// Token counts from what an upstream answers (docs/gateway.md "Counting"), read from a copy of
// the bytes as they pass: a JSON body at its end, a server-sent event stream event by event.
// When the gateway asked an OpenAI-style stream for its usage on the client's behalf
// (stream_options.include_usage), `strip` takes out what that added (the usage-only chunk and the
// `usage: null` of the other chunks), so the client sees what it would have seen without it.

import { SseSplitter, sseData, type SsePiece } from '../../lib/sse.js';

export interface TokenCounts { input_tokens: number; output_tokens: number }

const count = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);

/**
 * The usage an upstream object carries: OpenAI chat/completions (`usage.prompt_tokens`,
 * `completion_tokens`), OpenAI responses (`usage` or a `response.completed` event's
 * `response.usage`: `input_tokens`, `output_tokens`), Anthropic messages (`usage`, or
 * `message_start`'s `message.usage`; cache reads and writes count as input).
 */
export function usageOf(value: unknown): { input?: number; output?: number } | null {
  if (typeof value !== 'object' || value === null) return null;
  const v = value as { usage?: unknown; response?: { usage?: unknown }; message?: { usage?: unknown } };
  const usage = [v.usage, v.response?.usage, v.message?.usage].find((u) => typeof u === 'object' && u !== null) as Record<string, unknown> | undefined;
  if (!usage) return null;
  let input = count(usage.prompt_tokens);
  if (input === undefined) {
    const parts = [usage.input_tokens, usage.cache_creation_input_tokens, usage.cache_read_input_tokens].map(count).filter((n): n is number => n !== undefined);
    input = parts.length > 0 ? parts.reduce((a, b) => a + b, 0) : undefined;
  }
  const output = count(usage.completion_tokens) ?? count(usage.output_tokens);
  return input === undefined && output === undefined ? null : { input, output };
}

/** The largest counts seen: stream events carry running totals (Anthropic's message_delta), never less. */
export class UsageMeter {
  input_tokens = 0;
  output_tokens = 0;
  seen = false;

  add(value: unknown): void {
    const usage = usageOf(value);
    if (!usage) return;
    this.seen = true;
    if (usage.input !== undefined) this.input_tokens = Math.max(this.input_tokens, usage.input);
    if (usage.output !== undefined) this.output_tokens = Math.max(this.output_tokens, usage.output);
  }

  counts(): TokenCounts {
    return { input_tokens: this.input_tokens, output_tokens: this.output_tokens };
  }
}

/** Largest answer read for its usage (all of it still reaches the client). */
const MAX_TAP_BYTES = 16 * 1024 * 1024;

/** A non-streaming answer: a copy kept (up to a bound) and read at the end. */
export class JsonTap {
  private chunks: Buffer[] = [];
  private size = 0;

  constructor(readonly meter: UsageMeter) {}

  /** True once part of the answer passed unread (past MAX_TAP_BYTES): its usage is not counted. */
  get unread(): boolean {
    return this.size > MAX_TAP_BYTES;
  }

  push(chunk: Buffer): Buffer {
    this.size += chunk.length;
    if (this.size <= MAX_TAP_BYTES) this.chunks.push(chunk);
    else this.chunks = [];
    return chunk;
  }

  end(): Buffer {
    if (!this.unread) {
      try {
        this.meter.add(JSON.parse(Buffer.concat(this.chunks).toString('utf8')));
      } catch { /* not JSON: no usage */ }
    }
    this.chunks = [];
    return Buffer.alloc(0);
  }
}

/** `json` (the text of `obj`) without its top-level `usage` member, changing nothing else where it can. */
export function withoutUsage(json: string, obj: Record<string, unknown>): string {
  // the common case (OpenAI puts it last): the text ends with the top-level member, nothing else can
  if (obj.usage === null && json.endsWith(',"usage":null}')) return `${json.slice(0, -',"usage":null}'.length)}}`;
  const rest = { ...obj };
  delete rest.usage;
  const expected = JSON.stringify(rest);
  if (obj.usage === null) {
    for (const pattern of [/,\s*"usage"\s*:\s*null/g, /"usage"\s*:\s*null\s*,?/g]) {
      for (const m of json.matchAll(pattern)) {
        const candidate = json.slice(0, m.index) + json.slice(m.index + m[0].length);
        try {
          // one data line carries it: a candidate spread over lines is not used
          if (!/[\r\n]/.test(candidate) && JSON.stringify(JSON.parse(candidate)) === expected) return candidate;
        } catch { /* not this occurrence */ }
      }
    }
  }
  return expected;
}

/**
 * A server-sent event stream. Without `strip` every chunk passes at once, unchanged, and a copy
 * is parsed; with it, each complete event passes as soon as it is complete, the usage the
 * gateway asked for taken out. An event past 16 Mi characters passes unread (SseSplitter); the
 * events after it are read again.
 */
export class SseTap {
  private readonly splitter = new SseSplitter();

  constructor(readonly meter: UsageMeter, private readonly strip: boolean) {}

  /** True once an event passed unread: its usage is not counted. */
  get unread(): boolean {
    return this.splitter.skipped > 0;
  }

  push(chunk: Buffer): Buffer {
    const out = this.send(this.splitter.push(chunk));
    return this.strip ? Buffer.from(out, 'utf8') : chunk;
  }

  end(): Buffer {
    const out = this.send(this.splitter.end());
    return this.strip ? Buffer.from(out, 'utf8') : Buffer.alloc(0);
  }

  private send(pieces: SsePiece[]): string {
    let out = '';
    for (const piece of pieces) out += 'event' in piece ? this.event(piece.event) : piece.unread;
    return out;
  }

  /** Counts the event; answers what to send for it (when stripping). */
  private event(event: string): string {
    const data = sseData(event);
    if (data === null || data === '[DONE]') return event;
    let obj: unknown;
    try {
      obj = JSON.parse(data);
    } catch {
      return event;
    }
    this.meter.add(obj);
    if (!this.strip || typeof obj !== 'object' || obj === null || Array.isArray(obj) || !('usage' in obj)) return event;
    const record = obj as Record<string, unknown>;
    // the chunk that only carries the usage we asked for: the client would not have had it
    if (Array.isArray(record.choices) && record.choices.length === 0) return '';
    const replaced = withoutUsage(data, record);
    const lines = event.split(/(\r\n|\n|\r)/);
    let wrote = false;
    let out = '';
    for (let i = 0; i < lines.length; i += 2) {
      const line = lines[i]!;
      const eol = lines[i + 1] ?? '';
      if (line.startsWith('data:')) {
        if (!wrote) out += `data: ${replaced}${eol}`;
        wrote = true;
      } else {
        out += line + eol;
      }
    }
    return out;
  }
}
