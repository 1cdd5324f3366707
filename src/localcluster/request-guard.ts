// What a request must satisfy before the local cluster reads it (issue 15): it only listens on
// loopback, so a web page the developer visits must not drive it. A Host that is not loopback
// or the bound address (DNS rebinding) and a cross-site Origin are 403; a body that is not
// JSON, YAML, a patch type or Kubernetes protobuf (protobuf.ts, read before this check) is 415,
// as on a real API server (a browser's cross-site "simple" POST is text/plain); JSON nested
// deeper than MAX_DEPTH is 400 before it is parsed.
import type { IncomingMessage } from 'node:http';
import { hostAllowed, originAllowed } from '../lib/loopback-host.js';
import { errors } from './status.js';

/** Far beyond any Kubernetes object; far below what recursive code (patches, validation) survives. */
export const MAX_DEPTH = 512;

const BODY_MEDIA_TYPES = new Set([
  'application/json', 'application/yaml',
  'application/merge-patch+json', 'application/json-patch+json', 'application/strategic-merge-patch+json', 'application/apply-patch+yaml',
]);

/** 403 for a foreign Host or a cross-site Origin / Sec-Fetch-Site. */
export function guardRequest(req: IncomingMessage, boundAddress: string): void {
  const host = req.headers.host;
  if (!hostAllowed(host, boundAddress)) {
    throw errors.forbidden(`Host ${JSON.stringify(host ?? '')} is refused: the svc local cluster answers only to loopback names and ${boundAddress} (DNS rebinding protection)`);
  }
  const origin = req.headers.origin;
  if (!originAllowed(origin, boundAddress) || req.headers['sec-fetch-site'] === 'cross-site') {
    throw errors.forbidden(`cross-site request from ${JSON.stringify(origin ?? 'another site')} refused: the svc local cluster is for kubectl, helm and svc on this machine`);
  }
}

/** 415 unless `type` (lower-case, no parameters) is a body type the API server reads. */
export function assertBodyMediaType(type: string): void {
  if (type.includes('protobuf') || !BODY_MEDIA_TYPES.has(type)) {
    throw errors.unsupportedMediaType(`the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json`);
  }
}

/** 400 when JSON text (or YAML flow collections) nests deeper than `max`; strings are skipped. */
export function assertNestingDepth(text: string, max = MAX_DEPTH): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) throw errors.badRequest(`the request body nests deeper than ${max} levels`);
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
}

/** Depth of a parsed value (iterative: YAML block nesting is only known after parsing). */
export function assertParsedDepth(value: unknown, max = MAX_DEPTH): void {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth > max) throw errors.badRequest(`the request body nests deeper than ${max} levels`);
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
}
