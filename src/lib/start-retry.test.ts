import { describe, expect, it } from 'vitest';
import { nextStartAttempt, startStepReason, transientCause, type StartRetryPolicy } from './start-retry.js';

const URL = "'http://10.213.255.254:8080/v1/projects/p1/git/'";

describe('transientCause: worth waiting out, or not', () => {
  it.each([
    // the API down (svc dev restarting), its gateway address refusing
    [`git clone failed (exit 128): fatal: unable to access ${URL}: Failed to connect to 10.213.255.254 port 8080 after 0 ms: Couldn't connect to server`, 'the API or the git host is unreachable'],
    [`fatal: unable to access ${URL}: Could not resolve host: api.example.com`, 'the API or the git host is unreachable'],
    ['clone credential: GET http://10.213.255.254:8080/v1/projects/p1/git/clone-credential: fetch failed (connect ECONNREFUSED 10.213.255.254:8080)', 'the API or the git host is unreachable'],
    // the API answering 503 while it loads its caches
    [`fatal: unable to access ${URL}: The requested URL returned error: 503`, 'the API is starting (503)'],
    ['clone credential: GET http://x/v1/projects/p1/git/clone-credential: answered 503', 'the API is starting (503)'],
    [`fatal: unable to access ${URL}: The requested URL returned error: 502`, 'the API answered with a temporary error'],
    // the gateway cannot read the host
    ['fatal: remote error: svc: the project repository cannot be reached: fatal: unable to access host: Connection timed out', 'the git host cannot be reached'],
    // a clone cut off
    ['error: RPC failed; curl 18 transfer closed with outstanding read data remaining\nfatal: early EOF', 'the connection was cut off'],
    ['fatal: the remote end hung up unexpectedly', 'the connection was cut off'],
    ['clone credential: GET http://x/clone-credential: fetch failed (other side closed)', 'the connection was cut off'],
    ['error: RPC failed; curl 28 Operation too slow. Less than 1 bytes/sec transferred the last 60 seconds', 'the API or the git host did not answer in time'],
    ['clone credential: GET http://x/clone-credential: The operation was aborted due to timeout', 'the API or the git host did not answer in time'],
  ])('%s', (message, cause) => {
    expect(transientCause(message)).toBe(cause);
  });

  it.each([
    // permanent: waiting changes nothing, the start fails at once
    'the session branch does not exist upstream and the base ref "nope" was not found',
    `fatal: unable to access ${URL}: The requested URL returned error: 403`,
    'clone credential: GET http://x/v1/projects/p1/git/clone-credential: answered 401',
    "fatal: could not read Username for 'http://x': terminal prompts disabled",
    "fatal: repository 'http://x/p.git/' not found",
    'fatal: remote error: svc: the project repository cannot be reached: remote: Repository not found. fatal: Authentication failed',
    "fatal: '/gone/repo' does not appear to be a git repository",
    'workspace /workspace is not empty and not a git repository',
    'something nobody has seen before',
  ])('permanent: %s', (message) => {
    expect(transientCause(message)).toBeNull();
  });

  it('reads 400,000 characters of git stderr in time linear in them', () => {
    // `repository ('.*' )?` and `base ref .*` were quadratic: 80,000 characters took seconds
    const stderr = (unit: string) => `${unit.repeat(400_000 / unit.length)}\nfatal: unable to access 'http://x/': Could not resolve host: x`;
    expect(transientCause(stderr("repository '"))).toBe('the API or the git host is unreachable');
    expect(transientCause(stderr('base ref "'))).toBe('the API or the git host is unreachable');
    expect(transientCause(`${"repository '".repeat(30_000)}x' not found`)).toBeNull();
  });
});

describe('nextStartAttempt: backoff within the start deadline', () => {
  const policy: StartRetryPolicy = { deadlineMs: 60_000, backoffMs: 500, maxBackoffMs: 5_000 };
  const T0 = 1_000_000;
  const unreachable = { step: 'clone' as const, message: 'Failed to connect to 10.213.255.254 port 8080', cause: 'the API or the git host is unreachable' };

  it.each([
    // attempt, ms since the daemon started, decision
    [1, 100, { retryInMs: 500 }],
    [2, 700, { retryInMs: 1_000 }],
    [3, 1_800, { retryInMs: 2_000 }],
    [4, 4_000, { retryInMs: 4_000 }],
    [5, 8_100, { retryInMs: 5_000 }], // capped: a returning API is used within seconds
    [40, 54_000, { retryInMs: 5_000 }],
    [41, 55_000, { retryInMs: 5_000 }], // the next attempt still starts by the deadline
  ] as const)('attempt %i at +%i ms: again', (attempt, elapsed, decision) => {
    expect(nextStartAttempt(unreachable, attempt, T0, T0 + elapsed, policy)).toEqual({ ...decision, cause: unreachable.cause });
  });

  it('past the deadline: fails, naming the step, the cause, the attempts and the last error', () => {
    const decision = nextStartAttempt(unreachable, 42, T0, T0 + 56_000, policy);
    expect(decision).toEqual({
      fail: 'clone failed: the API or the git host is unreachable, still after 42 attempts over 56 s (start deadline 60 s); the last: Failed to connect to 10.213.255.254 port 8080',
    });
  });

  it('a permanent failure fails at the first attempt, with its own words', () => {
    const missingBase = { step: 'clone' as const, message: 'the session branch does not exist upstream and the base ref "nope" was not found', cause: null };
    expect(nextStartAttempt(missingBase, 1, T0, T0 + 100, policy)).toEqual({ fail: `clone failed: ${missingBase.message}` });
  });

  it('the checkpoint fetch is named when it is the step that failed', () => {
    const cut = { step: 'checkpoint fetch' as const, message: 'fatal: early EOF', cause: 'the connection was cut off' };
    expect(nextStartAttempt(cut, 1, T0, T0 + 59_900, policy)).toMatchObject({ fail: expect.stringMatching(/^checkpoint fetch failed: the connection was cut off, still after 1 attempt over 60 s/) });
  });
});

describe('startStepReason: the reason of a start that gave up names its step', () => {
  it.each([
    ['clone', 'CloneFailed'],
    ['checkpoint fetch', 'CheckpointFetchFailed'],
    ['session branch push', 'SessionBranchPushFailed'],
  ])('%s → %s', (step, reason) => {
    expect(startStepReason(step)).toBe(reason);
  });
});
