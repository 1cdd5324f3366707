/** Kubernetes API errors, classified by what a caller does about them. */
export type KubeErrorReason =
  | 'NotFound'
  | 'Conflict'
  | 'AlreadyExists'
  | 'Gone'
  | 'Invalid'
  | 'Forbidden'
  | 'Unauthorized'
  | 'UnsupportedMediaType'
  | 'Unavailable'
  | 'Other';

export class KubeError extends Error {
  constructor(
    readonly reason: KubeErrorReason,
    /** HTTP status, 0 when no response arrived. */
    readonly status: number,
    message: string,
    /** The Kubernetes Status object of the response, when there was one. */
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'KubeError';
  }
}

interface StatusBody {
  kind?: string;
  reason?: string;
  message?: string;
  code?: number;
}

function reasonOf(status: number, body: StatusBody | undefined): KubeErrorReason {
  switch (status) {
    case 404:
      return 'NotFound';
    case 409:
      return body?.reason === 'AlreadyExists' ? 'AlreadyExists' : 'Conflict';
    case 410:
      return 'Gone';
    case 400:
    case 422:
      return 'Invalid';
    case 401:
      return 'Unauthorized';
    case 403:
      return 'Forbidden';
    case 415:
      return 'UnsupportedMediaType';
    case 0:
    case 502:
    case 503:
    case 504:
      return 'Unavailable';
    default:
      return 'Other';
  }
}

function parseBody(body: unknown): StatusBody | undefined {
  if (typeof body === 'string') {
    try {
      return JSON.parse(body) as StatusBody;
    } catch {
      return undefined;
    }
  }
  return typeof body === 'object' && body !== null ? (body as StatusBody) : undefined;
}

/** A KubeError from an HTTP status and response body (a Kubernetes Status, usually). */
export function errorFromResponse(status: number, body: unknown, what: string): KubeError {
  const parsed = parseBody(body);
  const message = parsed?.message ?? (typeof body === 'string' && body ? body.slice(0, 500) : `HTTP ${status}`);
  return new KubeError(reasonOf(status, parsed), status, `${what}: ${message}`, parsed);
}

/**
 * Any error thrown by this module or by client-node (its ApiException has `code` and `body`,
 * its watch errors `statusCode`) as a KubeError. Network errors are Unavailable.
 */
export function classifyError(err: unknown, what = 'kubernetes request'): KubeError {
  if (err instanceof KubeError) return err;
  const e = err as { code?: unknown; statusCode?: unknown; body?: unknown; message?: string } | undefined;
  const status = typeof e?.code === 'number' ? e.code : typeof e?.statusCode === 'number' ? e.statusCode : undefined;
  if (status !== undefined) return errorFromResponse(status, e?.body ?? e?.message, what);
  return new KubeError('Unavailable', 0, `${what}: ${e?.message ?? String(err)}`);
}

export function isKubeError(err: unknown, reason: KubeErrorReason): boolean {
  return err instanceof KubeError && err.reason === reason;
}
export const isNotFound = (err: unknown) => isKubeError(err, 'NotFound');
export const isConflict = (err: unknown) => isKubeError(err, 'Conflict');
export const isAlreadyExists = (err: unknown) => isKubeError(err, 'AlreadyExists');
export const isGone = (err: unknown) => isKubeError(err, 'Gone');
export const isInvalid = (err: unknown) => isKubeError(err, 'Invalid');

/**
 * A write refused because the object changed since it was read (409 Conflict on a stale
 * resourceVersion): the caller reads again and retries. Writes through a CachedResource throw it.
 */
export class ConflictError extends KubeError {
  constructor(what: string, cause?: KubeError) {
    super('Conflict', 409, `${what}: the object changed since it was read; read it again and retry`, cause?.details);
    this.name = 'ConflictError';
  }
}

/**
 * The one retry-on-conflict loop (client-go's RetryOnConflict): `attempt` reads, decides and
 * writes; a Conflict (a stale resourceVersion, or a create that lost a race reported as
 * ConflictError) runs it again with a fresh read, at most `attempts` times in all. Any other
 * error, and the last Conflict, go to the caller.
 */
export async function retryOnConflict<R>(attempt: (n: number) => Promise<R>, options: { attempts?: number } = {}): Promise<R> {
  const attempts = options.attempts ?? 10;
  for (let n = 1; ; n++) {
    try {
      return await attempt(n);
    } catch (error) {
      if (!isConflict(error) || n >= attempts) throw error;
    }
  }
}
