// The manifest check off the caller's event loop. The API checks the manifest of an agent's branch
// (the merge preview and the merge gate), and a 1 MiB manifest of tiny nodes takes about 10 s of
// CPU to check (docs/manifest.md): on the API's own thread every other request waited that long.
// One worker thread, started on first use and not holding the process open, checks one manifest
// at a time; the answers of the last texts checked are remembered.
import { createHash } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { Lru } from '../lib/lru.js';
import type { ManifestIssue } from './issues.js';
import type { ManifestFileName } from './parse.js';

/** The check did not answer: too many were waiting, it took too long, or the worker failed. */
export class ManifestCheckUnavailable extends Error {}

export interface ManifestCheckThreadOptions {
  /** Longest one check may take before its worker is ended (default 60 s; the largest manifest takes about 10 s here). */
  timeoutMs?: number;
  /** Most checks waiting for the worker (default 16): each holds a text of up to 1 MiB. */
  maxWaiting?: number;
  /** How long an idle worker is kept (default 30 s): it holds tens of MB (its own heap and the schema). */
  idleMs?: number;
}

/** `checkManifest` and `listedIssues` of check.ts (or check.js once built), run where the worker loaded them. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const loaded = (workerData.fromSource ? import('tsx/esm/api').then(({ register }) => register()) : Promise.resolve())
  .then(() => import(workerData.module));
loaded.then(() => parentPort.postMessage({ ready: true }), () => undefined);
parentPort.on('message', ({ id, file, text }) => loaded.then((m) => {
  const check = m.checkManifest(file, text);
  parentPort.postMessage({ id, issues: check.valid ? null : m.listedIssues(check.issues) });
}).catch((error) => parentPort.postMessage({ id, error: String((error && error.message) || error) })));
`;

interface Waiting {
  id: number;
  file: ManifestFileName;
  text: string;
  resolve: (issues: ManifestIssue[] | null) => void;
  reject: (error: Error) => void;
}

type Answer = { id: number; issues: ManifestIssue[] | null } | { id: number; error: string } | { ready: true };

export class ManifestCheckThread {
  private readonly timeoutMs: number;
  private readonly maxWaiting: number;
  private readonly idleMs: number;
  private readonly remembered = new Lru<ManifestIssue[] | null>(64);
  private readonly waiting: Waiting[] = [];
  private worker: Worker | undefined;
  /** The worker has loaded the check: a check's time counts from then, not from the worker's start. */
  private loaded = false;
  private running: { check: Waiting; timer?: NodeJS.Timeout } | undefined;
  private nextId = 0;
  private idle: NodeJS.Timeout | undefined;

  constructor(options: ManifestCheckThreadOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.maxWaiting = options.maxWaiting ?? 16;
    this.idleMs = options.idleMs ?? 30_000;
  }

  /** The issues a manifest shows (listedIssues), null when it is valid. */
  issues(file: ManifestFileName, text: string): Promise<ManifestIssue[] | null> {
    const key = createHash('sha256').update(file).update('\0').update(text).digest('hex');
    const known = this.remembered.get(key);
    if (known !== undefined) return Promise.resolve(known);
    if (this.waiting.length >= this.maxWaiting) {
      return Promise.reject(new ManifestCheckUnavailable(`${this.waiting.length} manifest checks are waiting already: try again in a moment`));
    }
    return new Promise<ManifestIssue[] | null>((resolve, reject) => {
      const remember = (issues: ManifestIssue[] | null) => { this.remembered.set(key, issues); resolve(issues); };
      this.waiting.push({ id: this.nextId++, file, text, resolve: remember, reject });
      this.pump();
    });
  }

  /** Ends the worker; checks not answered yet fail. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.fail(new ManifestCheckUnavailable('the manifest checker was closed'), this.waiting.splice(0));
    this.worker = undefined;
    clearTimeout(this.idle);
    await worker?.terminate();
  }

  private pump(): void {
    if (this.running) return;
    if (this.waiting.length === 0) {
      this.idleSoon();
      return;
    }
    clearTimeout(this.idle);
    const check = this.waiting.shift()!;
    const worker = this.started();
    this.running = { check };
    if (this.loaded) this.startTimer();
    worker.postMessage({ id: check.id, file: check.file, text: check.text });
  }

  /** An idle worker is ended after idleMs. */
  private idleSoon(): void {
    clearTimeout(this.idle);
    if (!this.worker) return;
    this.idle = setTimeout(() => {
      const worker = this.worker;
      if (this.running || !worker) return;
      this.worker = undefined;
      void worker.terminate();
    }, this.idleMs);
    this.idle.unref();
  }

  private startTimer(): void {
    const running = this.running;
    if (!running || running.timer) return;
    running.timer = setTimeout(() => {
      this.fail(new ManifestCheckUnavailable(`checking ${running.check.file} took longer than ${this.timeoutMs} ms`), []);
    }, this.timeoutMs);
    running.timer.unref();
  }

  private started(): Worker {
    if (this.worker) return this.worker;
    const fromSource = import.meta.url.endsWith('.ts');
    // '../manifest/': the same file from src/manifest, dist/src/manifest and the API's bundle in dist/src/main
    const module = new URL(fromSource ? '../manifest/check.ts' : '../manifest/check.js', import.meta.url).href;
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { module, fromSource } });
    worker.unref();
    this.loaded = false;
    worker.on('message', (answer: Answer) => {
      if (this.worker !== worker) return; // an ended worker's last words
      if ('ready' in answer) {
        this.loaded = true;
        this.startTimer();
        return;
      }
      const running = this.running;
      if (!running || running.check.id !== answer.id) return;
      clearTimeout(running.timer);
      this.running = undefined;
      if ('error' in answer) running.check.reject(new ManifestCheckUnavailable(`the manifest check failed: ${answer.error}`));
      else running.check.resolve(answer.issues);
      this.pump();
    });
    const gone = (why: string) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      this.fail(new ManifestCheckUnavailable(`the manifest check failed: ${why}`), []);
    };
    worker.on('error', (error) => gone(error.message));
    worker.on('exit', (code) => gone(`its worker exited (${code})`));
    this.worker = worker;
    return worker;
  }

  /** Fails the running check (and `others`), ends its worker; the next check starts a new one. */
  private fail(error: Error, others: Waiting[]): void {
    const running = this.running;
    this.running = undefined;
    if (running) {
      clearTimeout(running.timer);
      running.check.reject(error);
      const worker = this.worker;
      this.worker = undefined;
      void worker?.terminate();
    }
    for (const check of others) check.reject(error);
    this.pump();
  }
}
