// HTTP calls over node:http(s): svc-agent's own (the clone credential, the engine's readiness
// probe and events, the state events, the model list) and the controllers' health reads. Node's
// global fetch loads its own HTTP client on first use (about 20 ms of a blocked event loop, at
// the start, where every millisecond is waited for: docs/sessions.md "Where a start's time goes")
// and costs more CPU per call. The proxies use undici (daemon/forward.ts).
import http from 'node:http';
import https from 'node:https';

export interface HttpCallOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** The whole call, from connecting to the last byte of the answer. */
  timeoutMs: number;
  /** A longer answer is cut off and the call rejects (an answer from a sandbox is untrusted). */
  maxBytes?: number;
}

export interface HttpAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** The URL and the module that speaks its protocol. */
function target(url: string): { target: URL; client: typeof http | typeof https } {
  const parsed = new URL(url);
  return { target: parsed, client: parsed.protocol === 'https:' ? https : http };
}

/** Calls `url` and reads the whole answer; a refused or cut connection or the timeout rejects with node's words. */
export function httpCall(url: string, options: HttpCallOptions): Promise<HttpAnswer> {
  const { target: to, client } = target(url);
  return new Promise((resolveCall, rejectCall) => {
    let timer: NodeJS.Timeout | undefined = undefined;
    const resolve = (answer: HttpAnswer) => { clearTimeout(timer); resolveCall(answer); };
    const reject = (error: Error) => { clearTimeout(timer); rejectCall(error); };
    const headers = { ...options.headers, ...(options.body !== undefined ? { 'content-length': String(Buffer.byteLength(options.body)) } : {}) };
    const req = client.request(to, { method: options.method ?? 'GET', headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (options.maxBytes !== undefined && size > options.maxBytes) req.destroy(new Error(`the answer is larger than ${options.maxBytes} bytes`));
        else chunks.push(chunk);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    timer = setTimeout(() => req.destroy(new Error(`timed out after ${options.timeoutMs} ms`)), options.timeoutMs);
    req.on('error', reject);
    req.end(options.body);
  });
}

/**
 * A long answer read as it comes (an SSE stream): `onChunk` for every piece; resolves when the
 * answer ends, rejects when it cannot start or is cut, and ends quietly when `signal` aborts.
 * Answers other than 200 reject with their status.
 */
export function httpStream(url: string, headers: Record<string, string>, signal: AbortSignal, onChunk: (chunk: Buffer) => void): Promise<void> {
  const { target: to, client } = target(url);
  return new Promise((resolve, reject) => {
    if (signal.aborted) return resolve();
    const req = client.request(to, { headers, agent: false }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        return reject(new Error(`answered ${res.statusCode}`));
      }
      res.on('data', onChunk);
      res.on('end', () => resolve());
      res.on('error', (error) => (signal.aborted ? resolve() : reject(error)));
    });
    const abort = () => req.destroy();
    signal.addEventListener('abort', abort, { once: true });
    req.on('close', () => { signal.removeEventListener('abort', abort); if (signal.aborted) resolve(); });
    req.on('error', (error) => (signal.aborted ? resolve() : reject(error)));
    req.end();
  });
}
