// The path the engine route may ask the daemon for (docs/sessions.md). The daemon routes /svc/*
// to its control surface and /proxy/* to the sandbox's ports, so the engine route refuses any
// target whose first segment could be read as either, however it is spelled: percent-encoded,
// with dot segments, double or back slashes, another case.
import { ApiError } from '../errors.js';

const RESERVED = new Set(['svc', 'proxy']);

/**
 * `target` is what follows `.../engine` in the request (express's `req.url` below the mount:
 * path and query, never decoded). Returns it unchanged when the daemon will send it to the
 * engine; 400 for an ambiguous spelling, 403 for the daemon's own paths.
 */
export function enginePath(target: string): string {
  if (!target.startsWith('/')) throw new ApiError(400, 'the engine path must start with /');
  const q = target.indexOf('?');
  const path = q < 0 ? target : target.slice(0, q);
  // eslint-disable-next-line no-control-regex -- control characters have no place in a path
  if (/[\\\x00-\x1f\x7f]/.test(path) || /%5c/i.test(path)) throw new ApiError(400, 'the engine path may not contain back slashes or control characters');
  const segments = path.slice(1).split('/');
  const decoded = segments.map((segment) => {
    try {
      return decodeURIComponent(segment);
    } catch {
      throw new ApiError(400, 'the engine path has a malformed percent-encoding');
    }
  });
  decoded.forEach((segment, i) => {
    const last = i === decoded.length - 1;
    if (segment === '' && !last) throw new ApiError(400, 'the engine path may not contain empty segments (//)');
    if (segment === '.' || segment === '..') throw new ApiError(400, 'the engine path may not contain . or .. segments');
    // eslint-disable-next-line no-control-regex -- nor encoded separators or control characters
    if (/[/\\\x00-\x1f\x7f]/.test(segment)) throw new ApiError(400, 'the engine path may not contain encoded slashes or control characters');
  });
  const first = decoded[0]!.trim().toLowerCase();
  if (RESERVED.has(first)) {
    throw new ApiError(403, first === 'svc'
      ? "the daemon's control paths (/svc/*) are not reachable through the engine route; to abort the current run use POST .../sessions/:id/abort"
      : "the sandbox's ports are reached through .../sessions/:id/proxy/:port/, not the engine route");
  }
  return target;
}
