// Bearer-token authentication middleware and the per-route authorization check.
import type { RequestHandler, Response } from 'express';
import { authorize, type Requirement } from './authz.js';
import { ApiError } from './errors.js';
import { isTokenRefusal, type Principal, type TokenVerifier } from './tokens.js';

const BEARER = /^Bearer[ ]+([^\s]+)\s*$/i;

/** The 401 for a token the API does not know, with what to do about it. */
export const UNKNOWN_TOKEN_MESSAGE = 'unknown or revoked token: use a current one (a cluster admin makes one with `svc tokens create`; under `svc dev`, `source .svc-dev/env` gives its admin token)';

/** 401 without a token or with one we do not know; the principal lands in res.locals. */
export function authenticate(verify: TokenVerifier): RequestHandler {
  return async (req, res, next) => {
    const header = req.get('authorization');
    if (!header) throw new ApiError(401, 'missing bearer token: send Authorization: Bearer <token>');
    const token = BEARER.exec(header)?.[1];
    if (!token) throw new ApiError(401, 'malformed Authorization header: expected Bearer <token>');
    const principal = await verify(token);
    if (!principal) throw new ApiError(401, UNKNOWN_TOKEN_MESSAGE);
    if (isTokenRefusal(principal)) throw new ApiError(401, principal.refused);
    res.locals.principal = principal;
    next();
  };
}

export function principalOf(res: Response): Principal {
  const principal = res.locals.principal as Principal | undefined;
  if (!principal) throw new Error('route mounted without authenticate()');
  return principal;
}

/** Throws 403 with the reason when the caller may not do what `need` describes. */
export function requireAccess(res: Response, need: Requirement): Principal {
  const principal = principalOf(res);
  const decision = authorize(principal, need);
  if (!decision.allowed) throw new ApiError(403, decision.reason);
  return principal;
}
