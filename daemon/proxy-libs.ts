// undici (plain requests) and http-proxy-middleware (WebSocket upgrades) are most of svc-agent's
// code, and a sandbox's start waits for every module svc-agent loads before it listens. So each
// is loaded (a chunk of the bundle of its own) by the first request that needs it, which waits for
// it: undici by the first proxied request (about 40 ms of CPU and 8 MB here), http-proxy-middleware
// by the first WebSocket upgrade (about 20 ms and 4 MB). A session nobody calls through svc-agent
// (a triggered one, whose prompt svc-agent sends itself) loads neither (docs/daemon.md).
import type * as Undici from 'undici';
import type * as ProxyMiddleware from 'http-proxy-middleware';

/** Loads a library once, on first use: every call gets the same promise; `loaded` once it is. */
class LazyLibrary<T extends object> {
  loaded: T | undefined;
  private loading: Promise<T> | undefined;

  constructor(private readonly load: () => Promise<T>) {}

  get(): Promise<T> {
    this.loading ??= this.load().then((lib) => (this.loaded = lib));
    return this.loading;
  }
}

/** undici, for the Forwarder (plain requests). */
export const undiciLib = new LazyLibrary<typeof Undici>(async () => commonJs(await import('undici'), 'Pool'));
/** http-proxy-middleware, for WebSocket upgrades. */
export const proxyMiddlewareLib = new LazyLibrary<typeof ProxyMiddleware>(async () => commonJs(await import('http-proxy-middleware'), 'createProxyMiddleware'));

/**
 * A CommonJS module's exports from its import(): the namespace itself under tsc's output and
 * node, its `default` in svc-agent's bundle (esbuild's split chunks export module.exports as
 * `default`).
 */
function commonJs<T extends object>(namespace: T, probe: keyof T): T {
  if (probe in namespace) return namespace;
  return (namespace as unknown as { default: T }).default;
}
