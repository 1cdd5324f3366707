// A push's request body is received in full, to a file of its own, before receive-pack runs and
// before any lock of the project is taken (docs/git-gateway.md): a client that stalls or trickles
// holds nothing but its own connection, and the body is bounded (SVC_GIT_MAX_PUSH_BYTES).
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** Default largest push body (the receive-pack request: commands and pack), 512 MiB. */
export const DEFAULT_MAX_PUSH_BYTES = 512 * 1024 * 1024;

export class PushTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`the push is larger than this gateway accepts (${limit} bytes, SVC_GIT_MAX_PUSH_BYTES): push fewer or smaller objects`);
    this.name = 'PushTooLargeError';
  }
}

/**
 * The most pkt-lines a push's command list may hold before its pack: a session writes its branch
 * and its checkpoint; shallow lines and a few refs the hook will refuse by name fit. Thousands of
 * commands held the project's mirror lock for minutes (the hook reads them one by one).
 */
export const MAX_PUSH_COMMANDS = 64;

export class PushTooManyRefsError extends Error {
  constructor(readonly limit: number) {
    super(`the push names more than ${limit} refs: a session pushes its own branch (git push origin HEAD) and its checkpoint, nothing else`);
    this.name = 'PushTooManyRefsError';
  }
}

/** Counts the pkt-lines of a receive-pack request's command list (up to its flush-pkt) as the body arrives. */
export class CommandListCounter {
  lines = 0;
  private done = false;
  private length = '';
  private skip = 0;

  push(chunk: Buffer): void {
    let at = 0;
    while (!this.done && at < chunk.length) {
      if (this.skip > 0) {
        const passed = Math.min(this.skip, chunk.length - at);
        this.skip -= passed;
        at += passed;
        continue;
      }
      const taken = chunk.toString('latin1', at, at + 4 - this.length.length);
      this.length += taken;
      at += taken.length;
      if (this.length.length < 4) return;
      const length = /^[0-9a-f]{4}$/i.test(this.length) ? parseInt(this.length, 16) : -1;
      this.length = '';
      // the flush-pkt ends the list (the pack follows); anything else not a pkt-line is receive-pack's to refuse
      if (length < 4) {
        this.done = true;
        return;
      }
      this.lines++;
      this.skip = length - 4;
    }
  }
}

/** A received push body: read it (once or more), then discard it. */
export interface ReceivedPush {
  size: number;
  open(): Readable;
  discard(): Promise<void>;
}

const QUARANTINE_DIR = '.svc-push-quarantine';
/** Leftovers of a process that died mid-push are removed after this long. */
const STALE_MS = 24 * 3600_000;

/** The directory below `root` (the mirrors' directory) that holds received pushes. */
export function pushQuarantineDir(root: string): string {
  return path.join(root, QUARANTINE_DIR);
}

/** Removes received pushes older than a day (a process killed mid-push leaves its file). */
export async function sweepPushQuarantine(root: string, nowMs = Date.now()): Promise<void> {
  const dir = pushQuarantineDir(root);
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch {
    return;
  }
  for (const entry of entries) {
    const file = path.join(dir, entry);
    const info = await stat(file).catch(() => null);
    if (info && nowMs - info.mtimeMs > STALE_MS) await rm(file, { recursive: true, force: true });
  }
}

/**
 * Writes `input` to a new file below `root` (mode 600), refusing with PushTooLargeError past
 * `maxBytes` and PushTooManyRefsError past MAX_PUSH_COMMANDS commands; nothing is kept when it fails. Takes no lock. `input` itself is never destroyed
 * (it may be the request, which still has to carry the refusal), only left unread.
 */
export async function receivePush(input: Readable, root: string, maxBytes: number): Promise<ReceivedPush> {
  let size = 0;
  const commands = new CommandListCounter();
  const limit = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      commands.push(chunk);
      if (size > maxBytes) done(new PushTooLargeError(maxBytes));
      else if (commands.lines > MAX_PUSH_COMMANDS) done(new PushTooManyRefsError(MAX_PUSH_COMMANDS));
      else done(null, chunk);
    },
  });
  limit.on('error', () => undefined); // seen through the pipeline below
  // the sender going away (or failing) before the end fails the receive
  let ended = false;
  const onEnd = () => { ended = true; };
  const onError = (error: Error) => limit.destroy(error);
  const onClose = () => { if (!ended) limit.destroy(new Error('the client went away before the push was received')); };
  input.once('end', onEnd);
  input.once('error', onError);
  input.once('close', onClose);
  const dir = pushQuarantineDir(root);
  let holder: string | undefined;
  const discard = () => (holder ? rm(holder, { recursive: true, force: true }) : Promise.resolve());
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    holder = await mkdtemp(path.join(dir, 'push-'));
    if (input.destroyed && !ended) throw new Error('the client went away before the push was received');
    input.pipe(limit);
    await pipeline(limit, createWriteStream(path.join(holder, 'body'), { mode: 0o600 }));
  } catch (error) {
    input.unpipe(limit);
    input.pause();
    await discard();
    throw error;
  } finally {
    input.off('end', onEnd);
    input.off('error', onError);
    input.off('close', onClose);
    input.on('error', () => undefined); // a late failure of the sender is no one's business now
  }
  const file = path.join(holder, 'body');
  return { size, open: () => createReadStream(file), discard };
}
