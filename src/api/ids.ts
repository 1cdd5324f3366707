// Ids in paths and bodies: Projects, Sessions and change requests are named by UUIDs (one pattern
// for every route group).
import { UUID } from '../lib/uuid.js';
import { badRequest } from './errors.js';

export { UUID };

/** `value` as a lower-case UUID; 400 naming `what` otherwise. */
export function parseUuid(value: string, what: string): string {
  if (!UUID.test(value)) throw badRequest(`${what} ${JSON.stringify(value.slice(0, 64))} is not a UUID`);
  return value.toLowerCase();
}
