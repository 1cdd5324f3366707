import { describe, expect, it } from 'vitest';
import { ApiCallError, apiBaseUrl, apiConfigFromEnv, createApiClient } from './api-client.js';

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

describe('an API the CLI cannot reach', () => {
  it('on a port fetch refuses: says why, not a bare "bad port"', async () => {
    const client = createApiClient({ baseUrl: 'http://127.0.0.1:6000/v1', token: 'svc_x' });
    await expect(client.request('GET', '/projects')).rejects.toThrow('cannot reach the svc API at http://127.0.0.1:6000/v1: Node\'s fetch refuses to connect to this port (a "bad port" of the Fetch standard)');
  });
});
