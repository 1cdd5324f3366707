import { describe, expect, it } from 'vitest';
import { JsonTap, SseTap, UsageMeter, usageOf, withoutUsage } from './usage-tap.js';

const sse = (obj: unknown) => `data: ${JSON.stringify(obj)}\n\n`;

/** Feeds `text` in chunks of `size` bytes (splitting events and multi-byte characters). */
function run(tap: SseTap, text: string, size: number): string {
  const bytes = Buffer.from(text, 'utf8');
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(tap.push(bytes.subarray(i, i + size)));
  out.push(tap.end());
  return Buffer.concat(out).toString('utf8');
}

describe('usageOf', () => {
  it.each([
    ['openai chat', { usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } }, { input: 10, output: 5 }],
    ['openai responses', { usage: { input_tokens: 7, output_tokens: 3 } }, { input: 7, output: 3 }],
    ['responses stream event', { type: 'response.completed', response: { usage: { input_tokens: 9, output_tokens: 4 } } }, { input: 9, output: 4 }],
    ['anthropic message_start', { type: 'message_start', message: { usage: { input_tokens: 12, cache_read_input_tokens: 100, cache_creation_input_tokens: 3, output_tokens: 1 } } }, { input: 115, output: 1 }],
    ['anthropic message_delta', { type: 'message_delta', usage: { output_tokens: 42 } }, { input: undefined, output: 42 }],
  ])('%s', (_name, value, expected) => {
    expect(usageOf(value)).toEqual(expected);
  });

  it('is null without usage', () => {
    expect(usageOf({ usage: null })).toBeNull();
    expect(usageOf({ choices: [] })).toBeNull();
    expect(usageOf('text')).toBeNull();
  });
});

describe('SseTap', () => {
  const chunks = [
    { id: 'c', choices: [{ index: 0, delta: { role: 'assistant', content: 'héllo ✓' } }], usage: null },
    { id: 'c', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: null },
    { id: 'c', choices: [], usage: { prompt_tokens: 21, completion_tokens: 8, total_tokens: 29 } },
  ];
  const upstream = chunks.map(sse).join('') + 'data: [DONE]\n\n';
  const withoutAsked = chunks.slice(0, 2).map((c) => { const { usage: _u, ...rest } = c; return sse(rest); }).join('') + 'data: [DONE]\n\n';

  it.each([1, 3, 7, 64, 4096])('passes the stream unchanged and counts it (chunks of %i bytes)', (size) => {
    const meter = new UsageMeter();
    expect(run(new SseTap(meter, false), upstream, size)).toBe(upstream);
    expect(meter.counts()).toEqual({ input_tokens: 21, output_tokens: 8 });
  });

  it.each([1, 5, 4096])('strips what the gateway asked for (chunks of %i bytes)', (size) => {
    const meter = new UsageMeter();
    expect(run(new SseTap(meter, true), upstream, size)).toBe(withoutAsked);
    expect(meter.counts()).toEqual({ input_tokens: 21, output_tokens: 8 });
  });

  it.each([1, 2, 3, 4, 5, 6, 7])('keeps event names and ids, CRLF line ends and a last chunk that has choices (chunks of %i bytes: the end split every way)', (size) => {
    const event = 'event: message\r\nid: 1\r\ndata: {"choices":[{"index":0,"delta":{}}],"usage":{"prompt_tokens":2,"completion_tokens":1}}\r\n\r\n';
    const meter = new UsageMeter();
    const tap = new SseTap(meter, true);
    expect(run(tap, event + event.replace('id: 1', 'id: 2'), size))
      .toBe('event: message\r\nid: 1\r\ndata: {"choices":[{"index":0,"delta":{}}]}\r\n\r\nevent: message\r\nid: 2\r\ndata: {"choices":[{"index":0,"delta":{}}]}\r\n\r\n');
    expect(meter.counts()).toEqual({ input_tokens: 2, output_tokens: 1 });
    expect(tap.unread).toBe(false);
  });

  it.each([false, true])('passes an event past 16 Mi characters unread, as it came, and reads the events after it (strip %s)', (strip) => {
    const big = sse({ choices: [{ index: 0, delta: { content: 'é'.repeat(17 * 1024 * 1024) } }], usage: { prompt_tokens: 999, completion_tokens: 999 } });
    const after = sse({ id: 'c', choices: [], usage: { prompt_tokens: 21, completion_tokens: 8 } });
    const meter = new UsageMeter();
    const tap = new SseTap(meter, strip);
    const out = run(tap, big + after + 'data: [DONE]\n\n', 64 * 1024 + 1);
    // compared as a boolean: a diff of 18 MB strings would not fit the worker's memory
    expect(out === big + (strip ? '' : after) + 'data: [DONE]\n\n').toBe(true);
    expect(meter.counts()).toEqual({ input_tokens: 21, output_tokens: 8 });
    expect(tap.unread).toBe(true);
  });

  it('counts an Anthropic stream (running totals)', () => {
    const text = [
      'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":30,"output_tokens":1}}}\n\n',
      'event: content_block_delta\ndata: {"type":"content_block_delta","delta":{"type":"text_delta","text":"hi"}}\n\n',
      'event: message_delta\ndata: {"type":"message_delta","usage":{"output_tokens":17}}\n\n',
      'event: message_stop\ndata: {"type":"message_stop"}\n\n',
    ].join('');
    const meter = new UsageMeter();
    expect(run(new SseTap(meter, false), text, 10)).toBe(text);
    expect(meter.counts()).toEqual({ input_tokens: 30, output_tokens: 17 });
  });

  it('passes what is not JSON, and a stream cut mid-event', () => {
    const meter = new UsageMeter();
    expect(run(new SseTap(meter, true), ': keep-alive\n\ndata: not json\n\ndata: {"choi', 3)).toBe(': keep-alive\n\ndata: not json\n\ndata: {"choi');
    expect(meter.seen).toBe(false);
  });
});

describe('withoutUsage', () => {
  it('removes the member and nothing else, also with spaces', () => {
    expect(withoutUsage('{"a":1,"usage":null,"b":2}', { a: 1, usage: null, b: 2 })).toBe('{"a":1,"b":2}');
    expect(withoutUsage('{"usage": null, "a": [1, 2]}', { usage: null, a: [1, 2] })).toBe('{ "a": [1, 2]}');
    // a "usage" inside a string or a nested object stays
    expect(withoutUsage('{"t":"\\"usage\\":null","x":{"usage":null},"usage":null}', { t: '"usage":null', x: { usage: null }, usage: null }))
      .toBe('{"t":"\\"usage\\":null","x":{"usage":null}}');
  });
});

describe('JsonTap', () => {
  it('counts the usage of a whole answer and passes the bytes', () => {
    const meter = new UsageMeter();
    const tap = new JsonTap(meter);
    const body = Buffer.from(JSON.stringify({ id: 'x', usage: { prompt_tokens: 3, completion_tokens: 4 } }));
    expect(tap.push(body.subarray(0, 5))).toEqual(body.subarray(0, 5));
    tap.push(body.subarray(5));
    tap.end();
    expect(meter.counts()).toEqual({ input_tokens: 3, output_tokens: 4 });
    expect(tap.unread).toBe(false);
  });

  it('passes an answer past 16 MiB unread', () => {
    const meter = new UsageMeter();
    const tap = new JsonTap(meter);
    const body = Buffer.from(JSON.stringify({ text: 'x'.repeat(16 * 1024 * 1024), usage: { prompt_tokens: 3, completion_tokens: 4 } }));
    expect(Buffer.concat([tap.push(body.subarray(0, 1024)), tap.push(body.subarray(1024))]).equals(body)).toBe(true);
    tap.end();
    expect(meter.seen).toBe(false);
    expect(tap.unread).toBe(true);
  });
});
