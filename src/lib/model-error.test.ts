import { describe, expect, it } from 'vitest';
import { engineErrorText, modelError } from './model-error.js';

describe('modelError', () => {
  it('names a model that cannot be reached only while opencode retries', () => {
    expect(modelError({ type: 'retry', attempt: 4, message: 'Cannot connect to API: ECONNREFUSED', next: 1 })).toBe('cannot reach the model: Cannot connect to API: ECONNREFUSED (attempt 4)');
    expect(modelError({ type: 'retry' })).toBe('cannot reach the model: no message');
    expect(modelError({ type: 'busy' })).toBeNull();
    expect(modelError(null)).toBeNull();
  });
});

describe('engineErrorText', () => {
  it.each([
    [{ name: 'UnknownError', data: { message: 'Model not found: nosuch/x.' } }, 'Model not found: nosuch/x.'],
    [{ name: 'UnknownError', data: { message: 'ProviderModelNotFoundError: Model not found: nosuch/x.\n    at getModel (chunk.js:1:2)' } }, 'ProviderModelNotFoundError: Model not found: nosuch/x.'],
    [{ name: 'APIError', data: { message: '  Unauthorized: invalid api key  ' } }, 'APIError: Unauthorized: invalid api key'],
    [{ name: 'ProviderAuthError' }, 'ProviderAuthError'],
    [{ message: 'socket hang up' }, 'socket hang up'],
    [{ name: 'UnknownError' }, null],
    [null, null],
    ['not an object', null],
  ])('%j: %s', (error, text) => {
    expect(engineErrorText(error)).toBe(text);
  });
});
