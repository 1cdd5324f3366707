// A small REST client for the CLI: SVC_API_URL (ending in /v1) and SVC_CLI_TOKEN (or its alias
// SVC_EXECUTOR_TOKEN). Every command group uses it; a failed call throws ApiCallError with the
// server's message, status and code; `withApiErrors` turns it into the CLI's error line.
import { CliError, EXIT } from './output.js';
import { withoutTrailingSlashes } from '../lib/trailing-slashes.js';

export class ApiCallError extends Error {
  constructor(
    message: string,
    /** HTTP status; 0 when the server could not be reached. */
    readonly status: number,
    readonly code?: string,
    /** The whole error body (e.g. `issues` of MANIFEST_INVALID). */
    readonly body?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'ApiCallError';
  }
}

export interface ApiClientConfig {
  baseUrl: string;
  token: string;
  /** The variable the token came from, named when the API refuses it. */
  tokenFrom?: string;
}

/** Reads the CLI's connection settings from the environment; throws a clear error when one is missing. */
export function apiConfigFromEnv(env: NodeJS.ProcessEnv = process.env): ApiClientConfig {
  const baseUrl = env.SVC_API_URL?.trim();
  const token = (env.SVC_CLI_TOKEN || env.SVC_EXECUTOR_TOKEN)?.trim();
  const missing = [!baseUrl && 'SVC_API_URL', !token && 'SVC_CLI_TOKEN (or SVC_EXECUTOR_TOKEN)'].filter(Boolean);
  if (missing.length) {
    throw new ApiCallError(`${missing.join(' and ')} not set: run \`source .svc-dev/env\` after \`svc dev\`, or export them`, 0);
  }
  return { baseUrl: apiBaseUrl(baseUrl!), token: token!, tokenFrom: env.SVC_CLI_TOKEN ? 'SVC_CLI_TOKEN' : 'SVC_EXECUTOR_TOKEN' };
}

/**
 * SVC_API_URL as requests are built on it: an http(s) URL, without trailing slashes; the API's
 * origin alone (the address `svc dev` prints for the dashboard) means its REST root, `/v1`.
 */
export function apiBaseUrl(raw: string): string {
  let url: URL | undefined;
  try { url = new URL(raw); } catch { /* said below */ }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new ApiCallError(`SVC_API_URL ${JSON.stringify(raw)} is not an http(s) URL (expected e.g. http://127.0.0.1:8080/v1)`, 0);
  }
  const base = withoutTrailingSlashes(raw);
  return url.pathname === '/' && !url.search && !url.hash ? `${base}/v1` : base;
}

export interface ApiClient {
  request<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T>;
  /** A GET whose answer is text (a log), with the same errors as `request`. */
  text(path: string): Promise<string>;
  /** A GET whose answer is read as it comes (an event stream), with the same errors as `request` before it. */
  stream(path: string, accept: string): Promise<Response>;
}

/** The first `max` bytes of an answer's body as text; the rest is not read. */
export async function textUpTo(res: Response, max: number): Promise<string> {
  if (!res.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    chunks.push(chunk as Uint8Array);
    size += (chunk as Uint8Array).length;
    if (size >= max) break; // leaving the loop cancels the body
  }
  return Buffer.concat(chunks).subarray(0, max).toString('utf8');
}

/** What fetch says when the server could not be reached (or the connection broke): its cause's code. */
export function unreachableCause(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  // undici's word for a port the Fetch standard blocks (6000, 6665-6669, ...), said without connecting
  if (cause?.message === 'bad port') return 'Node\'s fetch refuses to connect to this port (a "bad port" of the Fetch standard): serve the API on another port';
  return cause?.code ?? cause?.message ?? (error as Error).message;
}

export function createApiClient(config: ApiClientConfig = apiConfigFromEnv()): ApiClient {
  /** The answer's head; an ApiCallError when the server could not be reached. */
  async function send(method: string, path: string, body: unknown, accept: string): Promise<Response> {
    const url = config.baseUrl + (path.startsWith('/') ? path : `/${path}`);
    const headers: Record<string, string> = { authorization: `Bearer ${config.token}`, accept };
    if (body !== undefined) headers['content-type'] = 'application/json';
    try {
      return await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    } catch (error) {
      throw new ApiCallError(`cannot reach the svc API at ${config.baseUrl}: ${unreachableCause(error)}`, 0);
    }
  }
  /** A failed answer as an ApiCallError with the server's message and code. */
  function refusal(res: Response, text: string): ApiCallError {
    let parsed: unknown;
    try { parsed = text ? JSON.parse(text) : {}; } catch { parsed = undefined; }
    const errorBody = parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : undefined;
    let message = typeof errorBody?.error === 'string' ? errorBody.error : `${res.status} ${res.statusText}`;
    if (res.status === 401 && config.tokenFrom) message += ` [the token of ${config.tokenFrom}]`;
    return new ApiCallError(message, res.status, typeof errorBody?.code === 'string' ? errorBody.code : undefined, errorBody);
  }
  /** One call: the answer's text when it succeeded; an ApiCallError with the server's message otherwise. */
  async function call(method: string, path: string, body: unknown, accept: string): Promise<{ status: number; text: string }> {
    const res = await send(method, path, body, accept);
    const text = await res.text();
    if (!res.ok) throw refusal(res, text);
    return { status: res.status, text };
  }
  return {
    async request<T>(method: string, path: string, body?: unknown): Promise<T> {
      const { status, text } = await call(method, path, body, 'application/json');
      let parsed: unknown;
      try { parsed = text ? JSON.parse(text) : {}; } catch { parsed = undefined; }
      if (parsed === undefined) throw new ApiCallError(`the svc API answered ${method} ${path} with a body that is not JSON`, status);
      return parsed as T;
    },
    async text(path: string): Promise<string> {
      return (await call('GET', path, undefined, 'text/plain')).text;
    },
    async stream(path: string, accept: string): Promise<Response> {
      const res = await send('GET', path, undefined, accept);
      // a refusal relayed from a sandbox may be anything: its first 64 KiB say enough
      if (!res.ok || !res.body) throw refusal(res, await textUpTo(res, 64 * 1024).catch(() => ''));
      return res;
    },
  };
}

/**
 * Runs a command body against the API; a failed call exits 1 with `svc: <server message>` and
 * its code (else its HTTP status), plus the issues of a MANIFEST_INVALID. Every command group
 * that calls the API wraps its actions in it.
 */
export async function withApiErrors<R>(body: () => Promise<R>): Promise<R> {
  try {
    return await body();
  } catch (error) {
    if (!(error instanceof ApiCallError)) throw error;
    const issues = Array.isArray(error.body?.issues) ? (error.body.issues as { path: string; message: string }[]) : [];
    const detail = issues.map((i) => `\n  ${i.path || '(top level)'}: ${i.message}`).join('');
    const tag = error.code ? ` (${error.code})` : error.status ? ` (HTTP ${error.status})` : '';
    throw new CliError(`${error.message}${tag}${detail}`, EXIT.invalid);
  }
}

/** A commander action run through withApiErrors. */
export function apiAction(action: (...args: never[]) => Promise<void>) {
  return (...args: unknown[]) => withApiErrors(() => (action as (...a: unknown[]) => Promise<void>)(...args));
}
