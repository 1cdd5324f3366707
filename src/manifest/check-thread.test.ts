import { afterEach, describe, expect, it, vi } from 'vitest';
import { readFileSync } from 'node:fs';
import { checkManifest, listedIssues } from './check.js';
import { ManifestCheckThread, ManifestCheckUnavailable } from './check-thread.js';

const VALID = 'svc_version: 2\ndefault_agent: coder\nagents:\n  coder: {}\n';
/** `n` empty trigger entries: n bad entries; 50,000 take seconds of CPU to check. */
const badTriggers = (n: number) => `${VALID}triggers:\n${'  - {}\n'.repeat(n)}`;
/** Checks that must still be running when they are ended (timed out, closed). */
const HEAVY = badTriggers(50_000);
/** Checks that run to their end: past the 100 listed issues, and long enough to measure the loop. */
const MANY = badTriggers(5_000);

let thread: ManifestCheckThread | undefined;
afterEach(async () => { await thread?.close(); thread = undefined; });

describe('ManifestCheckThread', () => {
  it('answers what checkManifest and listedIssues answer: null when valid, the shown issues otherwise', async () => {
    thread = new ManifestCheckThread();
    expect(await thread.issues('svc.yaml', VALID)).toBeNull();
    const invalid = 'svc_version: 2\nagents: {}\n';
    expect(await thread.issues('svc.yaml', invalid)).toEqual(listedIssues(checkManifest('svc.yaml', invalid).issues));
    expect(await thread.issues('svc.toml', 'svc_version = 1\n[triggers]\n')).toEqual(checkManifest('svc.toml', 'svc_version = 1\n[triggers]\n').issues);
    const many = await thread.issues('svc.yaml', MANY);
    expect(many).toHaveLength(101);
    expect(many![100]!.message).toMatch(/^and \d+ more like these/);
  }, 60_000);

  it('leaves the caller\'s event loop free while it checks', async () => {
    thread = new ManifestCheckThread();
    await thread.issues('svc.yaml', VALID); // the worker is up
    let turns = 0;
    const ticker = setInterval(() => { turns++; }, 1);
    try {
      await thread.issues('svc.yaml', MANY);
    } finally {
      clearInterval(ticker);
    }
    // checked on this thread, the check would have held the loop: not one turn until it ended
    expect(turns).toBeGreaterThan(20);
  }, 60_000);

  it('refuses a check past the waiting bound, and ends a check that takes too long; the next one gets a new worker', async () => {
    thread = new ManifestCheckThread({ maxWaiting: 1, timeoutMs: 200 });
    const both = Promise.allSettled([thread.issues('svc.yaml', HEAVY), thread.issues('svc.yaml', `${HEAVY}# another\n`)]);
    await expect(thread.issues('svc.yaml', `${HEAVY}# a third\n`)).rejects.toThrow('1 manifest checks are waiting already: try again in a moment');
    const [running, waiting] = await both;
    expect(running).toMatchObject({ status: 'rejected', reason: expect.any(ManifestCheckUnavailable) });
    expect((running as PromiseRejectedResult).reason.message).toBe('checking svc.yaml took longer than 200 ms');
    expect(waiting).toMatchObject({ status: 'rejected', reason: { message: 'checking svc.yaml took longer than 200 ms' } });
    expect(await thread.issues('svc.yaml', VALID)).toBeNull();
  }, 60_000);

  it('ends its worker when idle, and starts another for the next check', async () => {
    const threads = () => Number(/^Threads:\s+(\d+)/m.exec(readFileSync('/proc/self/status', 'utf8'))![1]);
    const before = threads();
    thread = new ManifestCheckThread({ idleMs: 300 });
    expect(await thread.issues('svc.yaml', VALID)).toBeNull();
    expect(threads()).toBeGreaterThan(before);
    await vi.waitFor(() => expect(threads()).toBe(before), { timeout: 10_000, interval: 100 });
    expect(await thread.issues('svc.yaml', 'svc_version: 2\n')).toEqual(checkManifest('svc.yaml', 'svc_version: 2\n').issues);
  }, 60_000);

  it('fails the checks still waiting when closed', async () => {
    thread = new ManifestCheckThread();
    const pending = Promise.allSettled([thread.issues('svc.yaml', HEAVY), thread.issues('svc.yaml', `${HEAVY}#\n`)]);
    await thread.close();
    expect(await pending).toEqual([
      { status: 'rejected', reason: expect.objectContaining({ message: 'the manifest checker was closed' }) },
      { status: 'rejected', reason: expect.objectContaining({ message: 'the manifest checker was closed' }) },
    ]);
  }, 60_000);
});
