import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_PUSH_BYTES } from '../../git/index.js';
import { maxPushBytesFromEnv } from './service.js';

describe('SVC_GIT_MAX_PUSH_BYTES', () => {
  it('defaults to 512 MiB and takes a positive number of bytes', () => {
    expect(maxPushBytesFromEnv({})).toBe(DEFAULT_MAX_PUSH_BYTES);
    expect(DEFAULT_MAX_PUSH_BYTES).toBe(512 * 1024 * 1024);
    expect(maxPushBytesFromEnv({ SVC_GIT_MAX_PUSH_BYTES: ' ' })).toBe(DEFAULT_MAX_PUSH_BYTES);
    expect(maxPushBytesFromEnv({ SVC_GIT_MAX_PUSH_BYTES: '1048576' })).toBe(1048576);
    for (const bad of ['0', '-1', '1.5', '10MB', 'lots']) expect(() => maxPushBytesFromEnv({ SVC_GIT_MAX_PUSH_BYTES: bad })).toThrow(/positive number of bytes/);
  });
});
