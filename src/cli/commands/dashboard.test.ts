import { describe, expect, it } from 'vitest';
import { dashboardUrl, opener } from './dashboard.js';

describe('svc dashboard', () => {
  it.each([
    ['http://127.0.0.1:8080/v1', 'http://127.0.0.1:8080/'],
    ['http://127.0.0.1:8080/v1/', 'http://127.0.0.1:8080/'],
    ['https://svc.example.com/api/v1', 'https://svc.example.com/api/'],
    ['https://svc.example.com', 'https://svc.example.com/'],
  ])('the dashboard of %s is %s', (api, url) => {
    expect(dashboardUrl(api)).toBe(url);
  });

  it('refuses an API URL that is not a URL', () => {
    expect(() => dashboardUrl('127.0.0.1:8080')).toThrow(/not a URL/);
  });

  it('opens with xdg-open only in a graphical session, with open on macOS', () => {
    expect(opener('linux', {})).toBeNull();
    expect(opener('linux', { DISPLAY: ':0' })).toEqual(['xdg-open', []]);
    expect(opener('darwin', {})).toEqual(['open', []]);
  });
});
