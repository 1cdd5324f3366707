import { describe, expect, it } from 'vitest';
import { SseSplitter, eventData, sseData, type SsePiece } from './sse.js';

/** Feeds `text` as bytes in chunks of `size` (splitting events, line ends and multi-byte characters), then ends. */
function split(splitter: SseSplitter, text: string, size: number): SsePiece[] {
  const bytes = Buffer.from(text, 'utf8');
  const pieces: SsePiece[] = [];
  for (let i = 0; i < bytes.length; i += size) pieces.push(...splitter.push(bytes.subarray(i, i + size)));
  pieces.push(...splitter.end());
  return pieces;
}

describe('SseSplitter', () => {
  const events = ['data: {"a":"é✓"}\n\n', 'event: x\r\ndata: 1\r\n\r\n', ': comment\r\r', 'data: last\n\n'];

  it.each([1, 2, 3, 4, 5, 7, 64])('gives each event whole, whatever its line ends, in chunks of %i bytes', (size) => {
    expect(split(new SseSplitter(), events.join(''), size)).toEqual(events.map((event) => ({ event })));
  });

  it('takes text as well as bytes, and gives an incomplete last event at the end', () => {
    const splitter = new SseSplitter();
    expect(splitter.push('data: 1\n')).toEqual([]);
    expect(splitter.push('\ndata: 2')).toEqual([{ event: 'data: 1\n\n' }]);
    expect(splitter.end()).toEqual([{ event: 'data: 2' }]);
  });

  // the bound holds what is kept between chunks: an event that arrives whole in one chunk is read
  it.each([1, 10, 50])('hands on an event past its bound unread, as it comes, and reads the next one (chunks of %i bytes)', (size) => {
    const big = `data: ${'x'.repeat(150)}\n\n`;
    const splitter = new SseSplitter(100);
    const pieces = split(splitter, `data: a\n\n${big}data: b\n\n`, size);
    expect(pieces.filter((p) => 'event' in p)).toEqual([{ event: 'data: a\n\n' }, { event: 'data: b\n\n' }]);
    expect(pieces.map((p) => ('unread' in p ? p.unread : '')).join('')).toBe(big);
    expect(splitter.skipped).toBe(1);
  });
});

describe('sseData', () => {
  it('joins the data lines, one leading space off each', () => {
    expect(sseData('event: x\ndata: {"a":\r\ndata:1}\n\n')).toBe('{"a":\n1}');
    expect(sseData(': comment\n\n')).toBeNull();
    expect([...eventData([{ event: 'data: 1\n\n' }, { unread: 'data: 2' }, { event: 'id: 3\n\n' }])]).toEqual(['1']);
  });
});
