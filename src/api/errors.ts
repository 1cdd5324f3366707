// The API's one error type and its one error handler: every failure leaves as
// `{ "error": message, "code"?: CODE, ...extra }` with the status the SPEC names.
import type { ErrorRequestHandler, RequestHandler } from 'express';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: string,
    readonly extra?: Record<string, unknown>,
    /** `{ cause }`: what went wrong underneath (logged with a 5xx, never sent to the client). */
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'ApiError';
  }
}

export const badRequest = (message: string, extra?: Record<string, unknown>) => new ApiError(400, message, undefined, extra);
export const notFound = (message: string) => new ApiError(404, message);

export interface ErrorBody { error: string; code?: string; [key: string]: unknown }

export function errorBody(error: ApiError): ErrorBody {
  return { ...error.extra, error: error.message, ...(error.code ? { code: error.code } : {}) };
}

/** Express's own errors (bad JSON, body too large) keep their 4xx status; anything else is a 500. */
function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const e = error as { status?: unknown; type?: unknown; expose?: unknown } | null;
  // a path parameter that is not valid percent-encoding (`/v1/projects/%`): the router's own 400, without `expose`
  if (error instanceof URIError && e?.status === 400) return new ApiError(400, 'the path is not valid percent-encoding');
  if (e && typeof e.status === 'number' && e.status >= 400 && e.status < 500 && e.expose) {
    if (e.type === 'entity.parse.failed') return new ApiError(400, 'request body is not valid JSON');
    if (e.type === 'entity.too.large') {
      const { limit } = error as { limit?: unknown };
      return new ApiError(413, typeof limit === 'number' ? `request body is too large: at most ${limit} bytes here` : 'request body is too large');
    }
    return new ApiError(e.status, (error as Error).message);
  }
  return new ApiError(500, 'internal error');
}

/** The error's stack and, below it, the stacks of its causes (what a 5xx is logged with). */
export function describeError(error: unknown): string {
  const lines: string[] = [];
  for (let e: unknown = error, depth = 0; e !== undefined && depth < 5; depth++) {
    lines.push(`${depth ? 'caused by: ' : ''}${e instanceof Error ? e.stack ?? e.message : String(e)}`);
    e = e instanceof Error ? e.cause : undefined;
  }
  return lines.join('\n');
}

/**
 * A 5xx the code chose and explained (an upstream that cannot be reached, a dependency not
 * ready), with nothing underneath: its message says it all, a stack would only bury it.
 */
const explained = (error: unknown): boolean => error instanceof ApiError && error.cause === undefined;

export interface ErrorHandlerOptions {
  /** Where unexpected (5xx) errors are reported; never sent to the client. */
  log?: (message: string) => void;
}

export function errorHandler(options: ErrorHandlerOptions = {}): ErrorRequestHandler {
  const log = options.log ?? ((message: string) => console.error(message));
  return (error, req, res, next) => {
    if (res.headersSent) return next(error);
    const apiError = toApiError(error);
    if (apiError.status >= 500) log(`${req.method} ${req.path}: ${explained(error) ? `${apiError.status} ${apiError.message}` : describeError(error)}`);
    res.status(apiError.status).json(errorBody(apiError));
  };
}

/** The last route: anything unmatched is a JSON 404. */
export const unknownRoute: RequestHandler = (req, _res, next) => {
  next(new ApiError(404, `no route for ${req.method} ${req.path}`));
};
