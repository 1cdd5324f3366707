// Pure request validation for the change-request routes: every bad input is a 400 that names
// the problem, found before anything is read or written.
import { branchNameProblem, isFullSha } from '../../git/index.js';
import type { ChangeRequestStatusValue } from '../../resources/index.js';
import { badRequest } from '../errors.js';
import { UUID, parseUuid } from '../ids.js';

export const MAX_TITLE = 256;
export const MAX_TEXT = 65_536;

export interface CreateRequest {
  title: string;
  description: string;
  headRef: string;
  /** undefined: the project's default branch (rule 3). */
  baseRef?: string;
  sessionId?: string;
}

export interface EditRequest { title?: string; description?: string }
export interface MergeBody { message?: string; expectedHeadSha?: string }
export type StatusFilter = ChangeRequestStatusValue | 'all';

function objectBody(body: unknown, allowed: readonly string[], what: string): Record<string, unknown> {
  // express.json leaves an absent body as undefined: the same as {}.
  if (body === undefined) return {};
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest(`${what}: the body must be a JSON object`);
  const input = body as Record<string, unknown>;
  const unknown = Object.keys(input).filter((k) => !allowed.includes(k));
  if (unknown.length) throw badRequest(`${what}: unknown field(s) ${unknown.join(', ')} (allowed: ${allowed.join(', ') || 'none'})`);
  return input;
}

function optionalString(input: Record<string, unknown>, field: string, max: number): string | undefined {
  const value = input[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw badRequest(`${field} must be a string`);
  if (value.length > max) throw badRequest(`${field} is longer than ${max} characters`);
  return value;
}

// C0 controls and DEL except tab and newline: git refuses NUL in a commit message, and the rest
// only garble terminals and logs.
// eslint-disable-next-line no-control-regex -- the point is to find control characters
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f]/;

/** optionalString for text that ends up in commit messages: no control characters but tab and newline. */
function optionalText(input: Record<string, unknown>, field: string, max: number): string | undefined {
  const value = optionalString(input, field, max);
  if (value !== undefined && CONTROL.test(value)) {
    throw badRequest(`${field} must not contain control characters (other than newline and tab); found ${JSON.stringify(CONTROL.exec(value)![0])}`);
  }
  return value;
}

function title(value: string | undefined, required: boolean): string | undefined {
  if (value === undefined) {
    if (required) throw badRequest('title is required');
    return undefined;
  }
  if (value.trim() === '') throw badRequest('title must not be empty');
  if (/[\r\n]/.test(value)) throw badRequest('title must be one line');
  return value.trim();
}

function branch(field: string, value: string): string {
  const problem = branchNameProblem(value);
  if (problem) throw badRequest(`${field} ${JSON.stringify(value)} is not a valid branch name: ${problem}`);
  return value;
}

/** SPEC §4.1 create, rules 1, 2 and the shape of 3-5 (the rest needs the project and the repository). */
export function parseCreate(body: unknown): CreateRequest {
  const input = objectBody(body, ['title', 'description', 'head_ref', 'base_ref', 'session_id'], 'create change request');
  const t = title(optionalText(input, 'title', MAX_TITLE), true)!;
  const description = optionalText(input, 'description', MAX_TEXT) ?? '';
  const head = optionalString(input, 'head_ref', 1024);
  if (head === undefined || head === '') throw badRequest('head_ref is required');
  const base = optionalString(input, 'base_ref', 1024);
  const sessionId = optionalString(input, 'session_id', 1024);
  // a session's id or nothing: another value was dropped without a word and the CR had no origin
  if (sessionId !== undefined && sessionId !== '' && !UUID.test(sessionId)) throw badRequest(`session_id ${JSON.stringify(sessionId.slice(0, 64))} is not a session id (a UUID)`);
  return {
    title: t,
    description,
    headRef: branch('head_ref', head),
    ...(base !== undefined && base !== '' ? { baseRef: branch('base_ref', base) } : {}),
    ...(sessionId ? { sessionId } : {}),
  };
}

export function parseEdit(body: unknown): EditRequest {
  const input = objectBody(body, ['title', 'description'], 'update change request');
  const t = title(optionalText(input, 'title', MAX_TITLE), false);
  const description = optionalText(input, 'description', MAX_TEXT);
  if (t === undefined && description === undefined) throw badRequest('update change request: give title and/or description');
  return { ...(t !== undefined ? { title: t } : {}), ...(description !== undefined ? { description } : {}) };
}

export function parseMerge(body: unknown): MergeBody {
  const input = objectBody(body, ['message', 'expected_head_sha'], 'merge');
  const message = optionalText(input, 'message', MAX_TEXT);
  if (message !== undefined && message.trim() === '') throw badRequest('message must not be empty when given');
  const expected = optionalString(input, 'expected_head_sha', 64);
  if (expected !== undefined && !isFullSha(expected)) throw badRequest('expected_head_sha must be a full commit sha (40 or 64 hex characters)');
  return { ...(message !== undefined ? { message } : {}), ...(expected !== undefined ? { expectedHeadSha: expected.toLowerCase() } : {}) };
}

export function parseRequestChanges(body: unknown): string {
  const input = objectBody(body, ['feedback'], 'request changes');
  const feedback = optionalText(input, 'feedback', MAX_TEXT); // it becomes the agent's prompt: no NUL, as a prompt
  if (feedback === undefined || feedback.trim() === '') throw badRequest('feedback is required and must not be empty');
  return feedback;
}

/** close and reopen take no body (an empty object is fine). */
export function parseEmpty(body: unknown, what: string): void {
  objectBody(body, [], what);
}

/** GET /?origin_session_id=<uuid>: the CRs one session opened (the session page); absent: all. */
export function parseOriginFilter(query: string | undefined): string | undefined {
  return query === undefined || query === '' ? undefined : parseUuid(query, 'origin_session_id');
}

export function parseStatusFilter(query: unknown): StatusFilter {
  if (query === undefined || query === '') return 'all';
  if (query === 'open' || query === 'merged' || query === 'closed' || query === 'all') return query;
  throw badRequest(`status must be one of open, merged, closed, all (got ${JSON.stringify(query)})`);
}

