// Query parameters more than one route group reads.
import type { Request } from 'express';
import { badRequest } from './errors.js';

/**
 * `?limit=`: a plain whole number from 1 to `max` (not 0x10, 1e2 or +1), else 400; absent, the
 * route's default (undefined: no limit).
 */
export function parseLimit<D extends number | undefined>(value: unknown, max: number, fallback: D): number | D {
  if (value === undefined) return fallback;
  const n = typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : NaN;
  if (!(n >= 1 && n <= max)) throw badRequest(`limit must be a whole number from 1 to ${max}`);
  return n;
}

/** `?name=` as one string (absent: undefined); given twice (an array) or as an object, 400. */
export function queryString(req: Request, name: string): string | undefined {
  const value = req.query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw badRequest(`${name} must be given once`);
  return value;
}
