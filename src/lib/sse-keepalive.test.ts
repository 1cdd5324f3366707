import { PassThrough } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { SseSplitter, eventData } from './sse.js';
import { SseKeepalive } from './sse-keepalive.js';

/** Feeds `steps` (text, or a pause in ms) through a keepalive of `intervalMs`; what a reader got. */
async function through(steps: (string | number)[], intervalMs: number): Promise<string> {
  const source = new PassThrough();
  const keepalive = new SseKeepalive(intervalMs);
  const out: Buffer[] = [];
  source.pipe(keepalive).on('data', (chunk: Buffer) => out.push(chunk));
  const ended = new Promise((resolve) => keepalive.on('end', resolve));
  for (const step of steps) {
    if (typeof step === 'number') await sleep(step);
    else source.write(step);
  }
  source.end();
  await ended;
  return Buffer.concat(out).toString();
}

describe('SseKeepalive', () => {
  it('adds a comment while the stream is quiet between events, and passes events through unchanged', async () => {
    const text = await through(['data: {"a":1}\n\n', 120, 'data: {"b":2}\r\n\r\n', 120], 25);
    expect(text).toMatch(/^data: \{"a":1\}\n\n(: keepalive\n\n)+data: \{"b":2\}\r\n\r\n(: keepalive\n\n)+$/);
    const splitter = new SseSplitter();
    expect([...eventData(splitter.push(text))]).toEqual(['{"a":1}', '{"b":2}']);
  });

  it('never inside an event: one whose end is still to come, also when its blank line spans chunks', async () => {
    const text = await through(['data: {"a"', 120, ':1}\n', 120, '\n', 120], 25);
    expect(text).toMatch(/^data: \{"a":1\}\n\n(: keepalive\n\n)+$/);
  });

  it('says nothing while the stream keeps sending', async () => {
    const steps: (string | number)[] = [];
    for (let i = 0; i < 20; i++) steps.push(`data: ${i}\n\n`, 10);
    expect(await through(steps, 300)).not.toContain('keepalive');
  });
});
