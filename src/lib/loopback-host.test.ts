import { describe, expect, it } from 'vitest';
import { hostAllowed, isLoopbackBinding, originAllowed } from './loopback-host.js';

describe('hostAllowed', () => {
  it('accepts loopback names and the bound address, with or without a port', () => {
    for (const host of ['localhost', 'localhost:6443', '127.0.0.1:80', '127.1.2.3', '[::1]:8080', '[::1]', 'svc.localhost:1', 'LOCALHOST']) {
      expect(hostAllowed(host, '127.0.0.1'), host).toBe(true);
    }
    expect(hostAllowed('192.0.2.2:6443', '192.0.2.2')).toBe(true);
    expect(hostAllowed('192.0.2.2:6443', '0.0.0.0')).toBe(true);
    expect(hostAllowed('evil.example:6443', '0.0.0.0')).toBe(false);
  });
  it('refuses every other name, an empty or missing Host', () => {
    for (const host of ['evil.example', 'evil.example:6443', '127.0.0.1.evil.example', 'localhost.evil.example', '192.0.2.2:80', '', undefined]) {
      expect(hostAllowed(host, '127.0.0.1'), String(host)).toBe(false);
    }
  });
});

describe('originAllowed', () => {
  it('accepts no Origin and loopback pages; refuses other sites and null', () => {
    expect(originAllowed(undefined, '127.0.0.1')).toBe(true);
    expect(originAllowed('http://localhost:3000', '127.0.0.1')).toBe(true);
    expect(originAllowed('http://127.0.0.1:6443', '127.0.0.1')).toBe(true);
    for (const origin of ['https://evil.example', 'http://evil.example:6443', 'null', 'file://', 'chrome-extension://abc']) {
      expect(originAllowed(origin, '127.0.0.1'), origin).toBe(false);
    }
  });
});

describe('isLoopbackBinding', () => {
  it('is true for loopback addresses only', () => {
    expect(isLoopbackBinding('127.0.0.1')).toBe(true);
    expect(isLoopbackBinding('::1')).toBe(true);
    expect(isLoopbackBinding('0.0.0.0')).toBe(false);
    expect(isLoopbackBinding('192.0.2.2')).toBe(false);
  });
});
