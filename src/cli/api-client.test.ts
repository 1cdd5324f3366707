import { describe, expect, it } from 'vitest';
import { ApiCallError, apiBaseUrl, apiConfigFromEnv } from './api-client.js';

describe('SVC_API_URL', () => {
  it('the REST root as given; the origin alone (what svc dev prints for the dashboard) means /v1', () => {
    expect(apiBaseUrl('http://127.0.0.1:8080/v1')).toBe('http://127.0.0.1:8080/v1');
    expect(apiBaseUrl('http://127.0.0.1:8080/v1/')).toBe('http://127.0.0.1:8080/v1');
    expect(apiBaseUrl('http://127.0.0.1:8080')).toBe('http://127.0.0.1:8080/v1');
    expect(apiBaseUrl('https://svc.example.com/')).toBe('https://svc.example.com/v1');
    expect(apiBaseUrl('https://example.com/svc/v1')).toBe('https://example.com/svc/v1'); // behind a path prefix
  });

  it('not an http(s) URL: says so and what one looks like', () => {
    for (const raw of ['127.0.0.1:8080/v1', 'localhost', 'ftp://example.com/v1']) {
      expect(() => apiBaseUrl(raw)).toThrow(ApiCallError);
      expect(() => apiBaseUrl(raw)).toThrow(`SVC_API_URL ${JSON.stringify(raw)} is not an http(s) URL (expected e.g. http://127.0.0.1:8080/v1)`);
    }
    expect(apiConfigFromEnv({ SVC_API_URL: ' http://127.0.0.1:8080 ', SVC_CLI_TOKEN: 't' }).baseUrl).toBe('http://127.0.0.1:8080/v1');
  });
});
