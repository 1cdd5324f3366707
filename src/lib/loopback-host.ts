// DNS rebinding and cross-site requests against servers that only listen on loopback (the local
// cluster, the API under `svc dev`): a browser on any web page can reach 127.0.0.1, but it sends
// the attacker's name as Host and the attacker's page as Origin. Pure checks; the servers answer.
import { isIP } from 'node:net';

/** Whether `host` (an address or name, no port) names this machine's loopback interface. */
export function isLoopbackName(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  return h === '::1' || h === '0:0:0:0:0:0:0:1';
}

/** The host part of a Host header value (`name:port`, `[v6]:port`, `name`). */
function hostOf(header: string): string {
  const value = header.trim();
  if (value.startsWith('[')) return value.slice(0, value.indexOf(']') + 1);
  const colon = value.lastIndexOf(':');
  return colon >= 0 && value.indexOf(':') === colon ? value.slice(0, colon) : value;
}

/**
 * A Host header is fine when it names loopback or the address the server is bound to (for a
 * wildcard bind, any IP literal: rebinding needs a DNS name).
 */
export function hostAllowed(header: string | undefined, boundAddress: string): boolean {
  if (header === undefined || header.trim() === '') return false;
  const host = hostOf(header).toLowerCase().replace(/^\[|\]$/g, '');
  const bound = boundAddress.toLowerCase().replace(/^\[|\]$/g, '');
  if (isLoopbackName(host) || host === bound) return true;
  return (bound === '0.0.0.0' || bound === '::') && isIP(host) !== 0;
}

/**
 * An Origin header (sent by browsers only) is fine when absent or when it is a page of this
 * machine's loopback or the bound address; `null` (sandboxed frames, file://) is cross-site.
 */
export function originAllowed(origin: string | undefined, boundAddress: string): boolean {
  if (origin === undefined) return true;
  let url: URL;
  try { url = new URL(origin); } catch { return false; }
  return (url.protocol === 'http:' || url.protocol === 'https:') && hostAllowed(url.host, boundAddress);
}

/** Whether a server bound to `address` listens only on loopback (then the checks above apply). */
export function isLoopbackBinding(address: string): boolean {
  return isLoopbackName(address);
}
