import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CommandListCounter, MAX_PUSH_COMMANDS, PushTooLargeError, PushTooManyRefsError, pushQuarantineDir, receivePush, sweepPushQuarantine } from './push-quarantine.js';
import { pktLine } from './gateway.js';

describe('receivePush', () => {
  let root: string;
  beforeEach(() => { root = mkdtempSync(path.join(os.tmpdir(), 'svc-push-q-')); });
  afterEach(() => rmSync(root, { recursive: true, force: true }));
  const left = () => readdirSync(pushQuarantineDir(root));

  it('keeps the whole body in a file of its own until discarded', async () => {
    const push = await receivePush(Readable.from([Buffer.from('0000'), Buffer.from('PACK...')]), root, 100);
    expect(push.size).toBe(11);
    expect(await text(push.open())).toBe('0000PACK...');
    expect(await text(push.open())).toBe('0000PACK...');
    expect(left()).toHaveLength(1);
    await push.discard();
    expect(left()).toEqual([]);
  });

  it('refuses a body over the limit, keeps nothing, and leaves the sender undestroyed (it carries the 413)', async () => {
    const input = new PassThrough();
    const received = receivePush(input, root, 10);
    input.write(Buffer.alloc(8));
    input.write(Buffer.alloc(8));
    await expect(received).rejects.toBeInstanceOf(PushTooLargeError);
    expect(input.destroyed).toBe(false);
    expect(left()).toEqual([]);
  });

  it(`refuses a command list of more than ${MAX_PUSH_COMMANDS} refs before the pack, and keeps nothing`, async () => {
    const zero = '0'.repeat(40);
    const commands = (n: number) => Buffer.concat([...Array.from({ length: n }, (_, i) => pktLine(`${zero} ${'1'.repeat(40)} refs/tags/t${i}\n`)), Buffer.from('0000PACK')]);
    await expect(receivePush(Readable.from([commands(MAX_PUSH_COMMANDS + 1)]), root, 1_000_000)).rejects.toBeInstanceOf(PushTooManyRefsError);
    expect(left()).toEqual([]);
    const push = await receivePush(Readable.from([commands(MAX_PUSH_COMMANDS)]), root, 1_000_000);
    await push.discard();
  });

  it('counts the command list read in pieces of any size, up to the flush-pkt (the pack after it is not pkt-lines)', () => {
    const body = Buffer.concat([pktLine('shallow x\n'), pktLine('a b refs/heads/s\0report-status\n'), pktLine('c d refs/svc/checkpoints/s\n'), Buffer.from('0000PACK0004000400040004')]);
    for (const size of [1, 2, 3, 5, body.length]) {
      const counter = new CommandListCounter();
      for (let i = 0; i < body.length; i += size) counter.push(body.subarray(i, i + size));
      expect(counter.lines).toBe(3);
    }
    const odd = new CommandListCounter();
    odd.push(Buffer.from('zzzz0008abcd'));
    expect(odd.lines).toBe(0); // not pkt-lines: receive-pack says so
  });

  it('fails when the sender goes away before the end', async () => {
    const input = new PassThrough();
    const received = receivePush(input, root, 100);
    input.write('partial');
    setImmediate(() => input.destroy());
    await expect(received).rejects.toThrow(/went away/);
    expect(left()).toEqual([]);
  });

  it('sweeps only what is older than a day', async () => {
    const dir = pushQuarantineDir(root);
    mkdirSync(path.join(dir, 'push-old'), { recursive: true });
    writeFileSync(path.join(dir, 'push-old', 'body'), 'x');
    mkdirSync(path.join(dir, 'push-new'));
    const dayAgo = (Date.now() - 25 * 3600_000) / 1000;
    utimesSync(path.join(dir, 'push-old'), dayAgo, dayAgo);
    await sweepPushQuarantine(root);
    expect(left()).toEqual(['push-new']);
  });
});
