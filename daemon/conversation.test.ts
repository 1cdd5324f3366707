import { describe, expect, it } from 'vitest';
import { scrub } from './conversation.js';
import { SseParser } from './events.js';

describe('scrub', () => {
  it('replaces secret values inside every string of a JSON value, longest first; short values stay', () => {
    const value = { a: 'token abcdef123 and abcdef1234', b: ['x abcdef123'], c: { d: 42, e: 'ab' } };
    expect(scrub(value, ['abcdef123', 'abcdef1234', 'ab'])).toEqual({
      a: 'token [secret removed by svc] and [secret removed by svc]', b: ['x [secret removed by svc]'], c: { d: 42, e: 'ab' },
    });
  });
});

describe('SseParser', () => {
  it('parses events split across chunks, ignoring comments and non-JSON data', () => {
    const parser = new SseParser();
    expect(parser.push('data: {"type":"session.status","properties":{"sessionID":"s1"')).toEqual([]);
    expect(parser.push(',"status":{"type":"busy"}}}\n\n: comment\n\ndata: not json\n\ndata: {"type":"server.heartbeat"}\r\n\r\n')).toEqual([
      { type: 'session.status', properties: { sessionID: 's1', status: { type: 'busy' } } },
      { type: 'server.heartbeat', properties: {} },
    ]);
  });
});
