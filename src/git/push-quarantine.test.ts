import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PushTooLargeError, pushQuarantineDir, receivePush, sweepPushQuarantine } from './push-quarantine.js';

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
