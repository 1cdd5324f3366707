import { describe, expect, it } from 'vitest';
import { exitCause, redactSecrets, secretValues, StderrTail, STDERR_TAIL_LINES } from './engine-errors.js';

describe('engine errors', () => {
  it('keeps the last stderr lines, bounded in count and length, across chunk boundaries', () => {
    const tail = new StderrTail();
    tail.push('first li');
    tail.push('ne\nsecond\n\n');
    expect(tail.lines()).toEqual(['first line', 'second']);
    for (let i = 0; i < 50; i++) tail.push(`line ${i}\n`);
    expect(tail.lines()).toHaveLength(STDERR_TAIL_LINES);
    expect(tail.lines().at(-1)).toBe('line 49');
    tail.push('x'.repeat(10_000));
    expect(tail.lines().at(-1)!.length).toBeLessThanOrEqual(500);
    tail.clear();
    expect(tail.lines()).toEqual([]);
  });

  it('says how the engine ended and what it last said', () => {
    expect(exitCause({ code: 3, signal: null }, ['a', 'b', 'c', 'd', 'e', 'f'])).toBe('the engine exited with code 3: b | c | d | e | f');
    expect(exitCause({ code: null, signal: 'SIGKILL' }, [])).toBe('the engine was killed by SIGKILL without writing to stderr');
  });

  it('never shows the sandbox tokens, project secret values or URL credentials', () => {
    const env = { SVC_SANDBOX_TOKEN: 'sandbox-token-1234', SVC_CLI_TOKEN: 'svc_cli-token-5678', SVC_PROJECT_SECRET_NAMES: 'API_KEY,SHORT', API_KEY: 'sk-live-abcdef', SHORT: 'x', OTHER: 'not-a-secret-value' };
    const secrets = secretValues(env);
    expect(secrets.sort()).toEqual(['sandbox-token-1234', 'sk-live-abcdef', 'svc_cli-token-5678'].sort());
    expect(redactSecrets('key sk-live-abcdef at https://bot:pw@git.example/r.git, token sandbox-token-1234', secrets))
      .toBe('key *** at https://***@git.example/r.git, token ***');
  });
});
