// The daemon's state events: a change is sent once, with the sandbox token; no change, no
// request; a 429 waits for its Retry-After; an unreachable API is given up after a few tries.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventKind, snapshotOf, StateReporter, type SnapshotSources, type StateSnapshot } from './state-events.js';

const base: StateSnapshot = { daemon: 'cloning', engine: 'stopped', restarts: 0, rootSession: null, initialPromptSent: false, rootSessionFailing: false, busy: false, modelRetrying: false, turnFailed: false, checkpoint: null, stalled: false, stalls: 0, waitingOut: null };
const received: { auth: string | undefined; body: string }[] = [];
let answer: { status: number; headers?: Record<string, string> } = { status: 202 };
let server: http.Server;
let apiUrl: string;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => { body += c.toString(); });
    req.on('end', () => {
      received.push({ auth: req.headers.authorization, body });
      res.writeHead(answer.status, answer.headers).end('{}');
    });
  }).listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise((r) => server.close(r)));

describe('eventKind', () => {
  it.each([
    [null, base, 'starting'],
    [base, { ...base, daemon: 'ready', engine: 'ready' }, 'ready'],
    [{ ...base, daemon: 'ready', engine: 'ready' }, { ...base, daemon: 'ready', engine: 'ready', busy: true }, 'busy'],
    [{ ...base, daemon: 'ready', engine: 'ready', busy: true }, { ...base, daemon: 'ready', engine: 'ready' }, 'idle'],
    [base, { ...base, engine: 'failed' }, 'failed'],
    [base, { ...base, daemon: 'restoring' }, 'changed'],
    // a turn whose model call is retried (ModelReachable), and one whose retry succeeded
    [{ ...base, daemon: 'ready', engine: 'ready', busy: true }, { ...base, daemon: 'ready', engine: 'ready', busy: true, modelRetrying: true }, 'changed'],
    [{ ...base, daemon: 'ready', engine: 'ready', busy: true, modelRetrying: true }, { ...base, daemon: 'ready', engine: 'ready', busy: true }, 'changed'],
    // a turn that failed (the engine's error), seen before its idle
    [{ ...base, daemon: 'ready', engine: 'ready', busy: true }, { ...base, daemon: 'ready', engine: 'ready', busy: true, turnFailed: true }, 'changed'],
    // a start step that waits out a transient failure (the Sandbox says so at once)
    [base, { ...base, waitingOut: 'clone: the connection was cut off' }, 'changed'],
  ] as const)('%o -> %o: %s', (before, after, kind) => {
    expect(eventKind(before, after)).toBe(kind);
  });
});

describe('snapshotOf', () => {
  it('a start step waiting out a failure is a change once (its step and cause), not at every attempt', () => {
    const agent = (startRetry: SnapshotSources['startRetry']): SnapshotSources => ({
      state: 'cloning', engine: { state: 'stopped', restarts: 0 }, rootSession: { id: null, initialPromptSentAt: null, lastError: null },
      progress: { busy: false, retrying: false, lastTurnError: () => null, report: () => ({ state: 'ok', stalls: 0 }) }, checkpoints: { report: () => ({ sha: null }) }, startRetry,
    });
    expect(snapshotOf(agent(null))).toEqual(base);
    const first = snapshotOf(agent({ step: 'clone', cause: 'the connection was cut off', attempt: 1 } as SnapshotSources['startRetry']));
    expect(first.waitingOut).toBe('clone: the connection was cut off');
    expect(snapshotOf(agent({ step: 'clone', cause: 'the connection was cut off', attempt: 5 } as SnapshotSources['startRetry']))).toEqual(first);
  });
});

describe('StateReporter', () => {
  it('sends each change once, the latest state winning; nothing while nothing changes', async () => {
    received.length = 0;
    answer = { status: 202 };
    let state = base;
    const reporter = new StateReporter({ apiUrl, sandboxToken: 'svcsbx.t', snapshot: () => state, intervalMs: 20 });
    reporter.start();
    await sleep(120);
    expect(received).toEqual([{ auth: 'Bearer svcsbx.t', body: '{"event":"starting"}' }]);
    state = { ...base, daemon: 'ready', engine: 'ready' };
    reporter.notify();
    await sleep(60);
    expect(received.map((r) => r.body)).toEqual(['{"event":"starting"}', '{"event":"ready"}']);
    await sleep(100);
    expect(received).toHaveLength(2);
    reporter.stop();
  });

  it('a boot up within bootQuietMs says ready alone; one still booting then says so', async () => {
    received.length = 0;
    answer = { status: 202 };
    let state = base;
    const quick = new StateReporter({ apiUrl, sandboxToken: 't', snapshot: () => state, intervalMs: 20, bootQuietMs: 300 });
    quick.start();
    await sleep(100);
    expect(received).toEqual([]);
    state = { ...base, daemon: 'ready', engine: 'ready' };
    quick.notify();
    await sleep(60);
    expect(received.map((r) => r.body)).toEqual(['{"event":"ready"}']);
    quick.stop();

    received.length = 0;
    const slow = new StateReporter({ apiUrl, sandboxToken: 't', snapshot: () => base, intervalMs: 20, bootQuietMs: 150 });
    slow.start();
    await sleep(100);
    expect(received).toEqual([]);
    await sleep(150);
    expect(received.map((r) => r.body)).toEqual(['{"event":"starting"}']);
    slow.stop();
  });

  it('a 429 waits for Retry-After before the state goes again', async () => {
    received.length = 0;
    answer = { status: 429, headers: { 'retry-after': '1' } };
    const reporter = new StateReporter({ apiUrl, sandboxToken: 't', snapshot: () => base, intervalMs: 20 });
    reporter.start();
    await sleep(300);
    expect(received).toHaveLength(1);
    answer = { status: 202 };
    await sleep(1000);
    expect(received).toHaveLength(2);
    await sleep(100);
    expect(received).toHaveLength(2);
    reporter.stop();
  });

  it('an API that cannot be reached is given up after a few tries (the safety net reads the health)', async () => {
    const lines: string[] = [];
    const reporter = new StateReporter({ apiUrl: 'http://127.0.0.1:1/v1', sandboxToken: 't', snapshot: () => base, intervalMs: 10, maxAttempts: 3, log: (l) => lines.push(l) });
    reporter.start();
    await sleep(2500);
    expect(lines).toEqual([expect.stringContaining('state event starting not delivered (no answer)')]);
    reporter.stop();
  });
});
