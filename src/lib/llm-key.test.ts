import { describe, expect, it } from 'vitest';
import { llmKey, llmKeySession, verifyLlmKey } from './llm-key.js';
import { newSandboxToken } from './sandbox-token.js';

const SESSION = '0b6c3f52-8d1e-4c55-9b1a-2f0e6f1c9a10';
const OTHER = '1b6c3f52-8d1e-4c55-9b1a-2f0e6f1c9a10';
const PROJECT = 'e1f2a3b4-0000-4000-8000-000000000001';

describe('model-gateway key', () => {
  const token = newSandboxToken(SESSION);
  const key = llmKey(token, PROJECT, SESSION);

  it('names its session, is stable for a token and differs from the token', () => {
    expect(key).toMatch(/^svcllm\.0b6c3f52-8d1e-4c55-9b1a-2f0e6f1c9a10\.[A-Za-z0-9_-]{43}$/);
    expect(llmKey(token, PROJECT, SESSION)).toBe(key);
    expect(key).not.toContain(token.split('.')[2]);
    expect(llmKeySession(key)).toBe(SESSION);
    expect(llmKeySession(token)).toBeUndefined();
    expect(llmKeySession('svc_abc')).toBeUndefined();
    expect(() => llmKey(token, PROJECT, 'nope')).toThrow();
  });

  it('verifies for its session, project and sandbox token only', () => {
    expect(verifyLlmKey(key, token, PROJECT, SESSION)).toBe(true);
    expect(verifyLlmKey(key, token, PROJECT, OTHER)).toBe(false);
    expect(verifyLlmKey(key, token, 'e1f2a3b4-0000-4000-8000-000000000002', SESSION)).toBe(false);
    // a new sandbox token (a wake that rotates it) makes the old key dead
    expect(verifyLlmKey(key, newSandboxToken(SESSION), PROJECT, SESSION)).toBe(false);
    expect(verifyLlmKey(`svcllm.${SESSION}.${'A'.repeat(43)}`, token, PROJECT, SESSION)).toBe(false);
    expect(verifyLlmKey('garbage', token, PROJECT, SESSION)).toBe(false);
  });
});
