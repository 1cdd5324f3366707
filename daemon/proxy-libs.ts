// undici (plain requests) and http-proxy-middleware (WebSocket upgrades) are most of svc-agent's
// code, and a sandbox's start waits for every module svc-agent loads before it listens. So they
// are loaded by the first proxied request, which waits for them (about 45 ms of CPU and 7-9 MB):
// a session nobody calls through svc-agent (a triggered one whose prompt svc-agent sends itself)
// never loads them (docs/daemon.md).
import type * as Undici from 'undici';
import type * as ProxyMiddleware from 'http-proxy-middleware';

export interface ProxyLibs {
  undici: typeof Undici;
  proxyMiddleware: typeof ProxyMiddleware;
}

let loaded: ProxyLibs | undefined;
let loading: Promise<ProxyLibs> | undefined;

/** Loads both once; every call gets the same promise. */
export function loadProxyLibs(): Promise<ProxyLibs> {
  loading ??= Promise.all([import('undici'), import('http-proxy-middleware')]).then(([undici, proxyMiddleware]) => (loaded = {
    undici: commonJs(undici, 'Pool'),
    proxyMiddleware: commonJs(proxyMiddleware, 'createProxyMiddleware'),
  }));
  return loading;
}

/** The libraries when loaded (the proxies' fast path), else undefined. */
export function proxyLibs(): ProxyLibs | undefined {
  return loaded;
}

/**
 * A CommonJS module's exports from its import(): the namespace itself under tsc's output and
 * node, its `default` in svc-agent's bundle (esbuild's split chunks export module.exports as
 * `default`).
 */
function commonJs<T extends object>(namespace: T, probe: keyof T): T {
  if (probe in namespace) return namespace;
  return (namespace as unknown as { default: T }).default;
}
