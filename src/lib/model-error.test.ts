import { describe, expect, it } from 'vitest';
import { modelError } from './model-error.js';

describe('modelError', () => {
  it('names a model that cannot be reached only while opencode retries', () => {
    expect(modelError({ type: 'retry', attempt: 4, message: 'Cannot connect to API: ECONNREFUSED', next: 1 })).toBe('cannot reach the model: Cannot connect to API: ECONNREFUSED (attempt 4)');
    expect(modelError({ type: 'retry' })).toBe('cannot reach the model: no message');
    expect(modelError({ type: 'busy' })).toBeNull();
    expect(modelError(null)).toBeNull();
  });
});
