// One small HTTP request over node:http(s), for the calls on a sandbox's start path (the clone
// credential, the engine's readiness probe, the state events). Node's global fetch loads its own
// HTTP client on first use: about 20 ms of a blocked event loop, paid three times over at the
// start, where every millisecond is waited for (docs/sessions.md "Where a start's time goes").
import http from 'node:http';
import https from 'node:https';

export interface HttpCallOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** The whole call, from connecting to the last byte of the answer. */
  timeoutMs: number;
}

export interface HttpAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** Calls `url` and reads the whole answer; a refused or cut connection or the timeout rejects with node's words. */
export function httpCall(url: string, options: HttpCallOptions): Promise<HttpAnswer> {
  const target = new URL(url);
  const client = target.protocol === 'https:' ? https : http;
  return new Promise((resolveCall, rejectCall) => {
    let timer: NodeJS.Timeout | undefined;
    const resolve = (answer: HttpAnswer) => { clearTimeout(timer); resolveCall(answer); };
    const reject = (error: Error) => { clearTimeout(timer); rejectCall(error); };
    const headers = { ...options.headers, ...(options.body !== undefined ? { 'content-length': String(Buffer.byteLength(options.body)) } : {}) };
    const req = client.request(target, { method: options.method ?? 'GET', headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    timer = setTimeout(() => req.destroy(new Error(`timed out after ${options.timeoutMs} ms`)), options.timeoutMs);
    req.on('error', reject);
    req.end(options.body);
  });
}
