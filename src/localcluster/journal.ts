// Durable state: `snapshot.json` (every object at one resourceVersion) plus `journal.ndjson`
// (one line per change after it). Appends are group-committed: every record queued while a
// write+fdatasync is in flight goes out in the next one, and each caller's promise settles
// only once its record is on disk. The journal is folded into a new snapshot now and then, in the
// background: the journal is set aside as `journal.prev.ndjson` (new records go to a new one) and
// the snapshot is written a slice of objects at a time, so that a large state does not stop every
// request while it is serialized (written at once: 314 ms at 20,000 objects of 2.5 KB).
import fs from 'node:fs';
import path from 'node:path';
import type { KObject } from './status.js';

/** A change: `obj` set (create/update) or absent (delete) at key `k`, at resourceVersion `rv`. */
export interface JournalRecord { rv: number; k: string; obj?: KObject }

export interface LoadedState { rv: number; objects: Map<string, KObject> }

const SNAPSHOT = 'snapshot.json';
const JOURNAL = 'journal.ndjson';
/** The journal being folded into the next snapshot (or, after a crash, that was). */
const PREVIOUS_JOURNAL = 'journal.prev.ndjson';
const NEXT_SNAPSHOT = 'snapshot.json.next';
const COMPACT_AFTER_RECORDS = 20_000;
/** Objects serialized per turn of the event loop while a snapshot is written in the background. */
const SNAPSHOT_SLICE = 500;
// The state holds every Secret: only the owner may read it.
const PRIVATE_FILE = 0o600;
const PRIVATE_DIR = 0o700;

interface Waiter { resolve: () => void; reject: (e: Error) => void }

export class Journal {
  private fd: number;
  private queue: string[] = [];
  private queuedRecords: JournalRecord[] = [];
  private waiters: Waiter[] = [];
  private writing = false;
  private idleWaiters: (() => void)[] = [];
  private recordsSinceSnapshot: number;
  private failure: Error | undefined;
  /** The background compaction in flight. */
  private compacting: Promise<void> | undefined;
  /** Bumped by a synchronous compaction: a background one begun before it must not replace its snapshot. */
  private generation = 0;

  private constructor(
    private dir: string,
    recordsSinceSnapshot: number,
    /** Called, in resourceVersion order, once records are durable (the watch hub listens). */
    private onDurable: (records: JournalRecord[]) => void,
    /** The whole state right now, for compaction. */
    private snapshotState: () => LoadedState,
    private readonly compactAfterRecords: number,
  ) {
    const file = path.join(dir, JOURNAL);
    const existed = fs.existsSync(file);
    this.fd = fs.openSync(file, 'a', PRIVATE_FILE);
    fs.fchmodSync(this.fd, PRIVATE_FILE); // a journal written by an older version was 644
    if (!existed) fsyncDir(dir); // the new file's directory entry must survive a crash too
    this.recordsSinceSnapshot = recordsSinceSnapshot;
    // a compaction cut off by a crash: fold both journals now, before anything else is written
    if (fs.existsSync(path.join(dir, PREVIOUS_JOURNAL))) this.compact();
  }

  /** Reads snapshot + journal (ignoring a torn last line from a crash mid-write). */
  static load(dir: string): { state: LoadedState; journalRecords: number } {
    fs.mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR });
    fs.chmodSync(dir, PRIVATE_DIR);
    const objects = new Map<string, KObject>();
    let rv = 0;
    const snapPath = path.join(dir, SNAPSHOT);
    if (fs.existsSync(snapPath)) {
      fs.chmodSync(snapPath, PRIVATE_FILE);
      const snap = JSON.parse(fs.readFileSync(snapPath, 'utf8')) as { rv: number; objects: [string, KObject][] };
      rv = snap.rv;
      for (const [k, o] of snap.objects) objects.set(k, o);
    }
    let count = 0;
    for (const name of [PREVIOUS_JOURNAL, JOURNAL]) {
      const journalPath = path.join(dir, name);
      if (!fs.existsSync(journalPath)) continue;
      const text = fs.readFileSync(journalPath, 'utf8');
      let offset = 0;
      while (offset < text.length) {
        const end = text.indexOf('\n', offset);
        if (end < 0) break; // torn tail: never acknowledged
        const rec = JSON.parse(text.slice(offset, end)) as JournalRecord;
        offset = end + 1;
        count++;
        if (rec.rv <= rv) continue; // already in the snapshot
        if (rec.obj) objects.set(rec.k, rec.obj);
        else objects.delete(rec.k);
        if (rec.rv > rv) rv = rec.rv;
      }
      if (offset < Buffer.byteLength(text)) fs.truncateSync(journalPath, Buffer.byteLength(text.slice(0, offset)));
    }
    return { state: { rv, objects }, journalRecords: count };
  }

  static open(dir: string, journalRecords: number, onDurable: Journal['onDurable'], snapshotState: Journal['snapshotState'], compactAfterRecords = COMPACT_AFTER_RECORDS): Journal {
    return new Journal(dir, journalRecords, onDurable, snapshotState, compactAfterRecords);
  }

  /** Queues a record; resolves once it is on disk. */
  append(rec: JournalRecord): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    this.queue.push(JSON.stringify(rec) + '\n');
    this.queuedRecords.push(rec);
    const done = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
    this.flush();
    return done;
  }

  /** Resolves when everything queued so far is durable (a read barrier). */
  idle(): Promise<void> | undefined {
    if (!this.writing && this.queue.length === 0) return undefined;
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private flush(): void {
    if (this.writing || this.queue.length === 0) return;
    this.writing = true;
    const data = Buffer.from(this.queue.join(''));
    const records = this.queuedRecords;
    const waiters = this.waiters;
    this.queue = [];
    this.queuedRecords = [];
    this.waiters = [];
    fs.write(this.fd, data, 0, data.length, null, (err) => {
      if (err) return this.settle(records, waiters, err);
      fs.fdatasync(this.fd, (err2) => this.settle(records, waiters, err2 ?? undefined));
    });
  }

  private settle(records: JournalRecord[], waiters: Waiter[], err?: Error): void {
    this.writing = false;
    if (err) {
      // The in-memory state is now ahead of the disk: refuse further writes rather than diverge.
      this.failure = new Error(`journal write failed: ${err.message}`);
      for (const w of waiters) w.reject(this.failure);
    } else {
      this.recordsSinceSnapshot += records.length;
      this.onDurable(records);
      for (const w of waiters) w.resolve();
      if (this.recordsSinceSnapshot >= this.compactAfterRecords && !this.compacting) {
        // a journal still set aside (its compaction failed) must not be overwritten: fold it now
        if (fs.existsSync(path.join(this.dir, PREVIOUS_JOURNAL))) this.compact();
        else this.compactInBackground();
      }
    }
    if (this.queue.length) this.flush();
    else for (const w of this.idleWaiters.splice(0)) w();
  }

  /** Writes the whole state as a new snapshot, then empties the journals. Synchronous: runs between flushes (tests, a crashed compaction). */
  compact(): void {
    this.generation++; // a background compaction still writing is superseded
    const state = this.snapshotState();
    const tmp = path.join(this.dir, `${SNAPSHOT}.tmp`);
    const fd = fs.openSync(tmp, 'w', PRIVATE_FILE);
    fs.fchmodSync(fd, PRIVATE_FILE);
    fs.writeSync(fd, JSON.stringify({ rv: state.rv, objects: [...state.objects] }));
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fs.renameSync(tmp, path.join(this.dir, SNAPSHOT));
    fsyncDir(this.dir);
    // Records still queued have rv <= state.rv; on load they are skipped as already snapshotted.
    fs.ftruncateSync(this.fd, 0);
    fs.rmSync(path.join(this.dir, PREVIOUS_JOURNAL), { force: true });
    this.recordsSinceSnapshot = 0;
  }

  /**
   * Sets the journal aside and writes the state as of now to a new snapshot, a slice at a time,
   * while new records go to a new journal. Runs between flushes (no write in flight). Until the
   * new snapshot is in place, the old one and both journals hold everything; after, the journal
   * set aside holds nothing the snapshot lacks and goes.
   */
  private compactInBackground(): void {
    const state = this.snapshotState();
    const generation = this.generation;
    fs.closeSync(this.fd);
    fs.renameSync(path.join(this.dir, JOURNAL), path.join(this.dir, PREVIOUS_JOURNAL));
    this.fd = fs.openSync(path.join(this.dir, JOURNAL), 'a', PRIVATE_FILE);
    fsyncDir(this.dir); // the journal set aside and the new one, both, before a record is acknowledged
    this.recordsSinceSnapshot = 0;
    this.compacting = this.writeSnapshot(state, () => generation === this.generation)
      .catch((err: Error) => {
        // nothing is lost: the old snapshot and both journals hold everything, and the next compaction folds them
        process.emitWarning(`journal compaction failed: ${err.message}`);
      })
      .finally(() => { this.compacting = undefined; });
  }

  private async writeSnapshot(state: LoadedState, current: () => boolean): Promise<void> {
    const next = path.join(this.dir, NEXT_SNAPSHOT);
    const file = await fs.promises.open(next, 'w', PRIVATE_FILE);
    try {
      await file.chmod(PRIVATE_FILE);
      // the same text as JSON.stringify({ rv, objects: [...entries] }), written in slices
      const entries = [...state.objects];
      await file.write(`{"rv":${JSON.stringify(state.rv)},"objects":[`);
      for (let i = 0; i < entries.length; i += SNAPSHOT_SLICE) {
        const slice = entries.slice(i, i + SNAPSHOT_SLICE).map((entry) => JSON.stringify(entry)).join(',');
        await file.write(i === 0 ? slice : `,${slice}`);
      }
      await file.write(']}');
      await file.sync();
    } finally {
      await file.close();
    }
    if (!current()) return void (await fs.promises.rm(next, { force: true }));
    await fs.promises.rename(next, path.join(this.dir, SNAPSHOT));
    fsyncDir(this.dir);
    if (current()) await fs.promises.rm(path.join(this.dir, PREVIOUS_JOURNAL), { force: true });
  }

  async close(): Promise<void> {
    await this.idle();
    await this.compacting;
    fs.closeSync(this.fd);
  }
}

function fsyncDir(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try { fs.fsyncSync(fd); } finally { fs.closeSync(fd); }
}
