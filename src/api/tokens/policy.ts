// Token administration rules (pure, tested as tables): what a create request may ask for, the
// grant a caller may hand out (never wider than its own token), who sees which tokens, and the
// REST shape (names, scopes, expiry, last use; never a token value).
import { parseDuration, DURATION_HELP } from '../../lib/duration.js';
import type { SerializedToken } from '../../lib/rest-shapes.js';
import { CAPABILITIES } from '../../manifest/index.js';
import { ApiError, badRequest } from '../errors.js';
import { isExpired, TOKEN_NAME_PATTERN, type Access, type Principal, type TokenGrant, type TokenInfo } from '../tokens.js';
import { UUID } from '../../lib/uuid.js';
import { parseRfc3339 } from '../../lib/rfc3339.js';

export type { SerializedToken };

const KNOWN_CAPABILITIES = new Set<string>(CAPABILITIES);
const CREATE_FIELDS = ['name', 'access', 'project_id', 'capabilities', 'expires_in', 'expires_at', 'user_id'];

export interface TokenRequest {
  name: string;
  access: Access;
  /** undefined = not asked (a project-scoped caller's own project is used) */
  projectUid?: string | null;
  capabilities: string[];
  /** absolute, computed from expires_in or expires_at */
  expiresAt: string | null;
  userId?: string;
}

/** Problems with a token name, or null. */
export function tokenNameProblem(name: string): string | null {
  return TOKEN_NAME_PATTERN.test(name) ? null : `token name ${JSON.stringify(name)} must be 1-63 lower-case letters, digits, '.', '_' or '-', starting and ending with a letter or digit`;
}

/** Problems with capability names (SPEC §2.1, `*` = all), or null. */
export function capabilitiesProblem(capabilities: readonly string[]): string | null {
  const unknown = capabilities.filter((c) => !KNOWN_CAPABILITIES.has(c));
  return unknown.length ? `unknown capabilit${unknown.length > 1 ? 'ies' : 'y'} ${unknown.join(', ')} (SPEC §2.1 names such as project.gitops.push, or *)` : null;
}

/** The absolute expiry for `expires_in` (a duration such as 30d) or `expires_at` (RFC 3339, in the future). */
export function expiryFrom(input: { expiresIn?: string; expiresAt?: string }, now: Date): { expiresAt: string | null } | { problem: string } {
  if (input.expiresIn !== undefined && input.expiresAt !== undefined) return { problem: 'give expires_in or expires_at, not both' };
  if (input.expiresIn !== undefined) {
    const ms = parseDuration(input.expiresIn);
    if (ms === null) return { problem: `expires_in ${JSON.stringify(input.expiresIn)} is not a duration: ${DURATION_HELP}` };
    return { expiresAt: new Date(now.getTime() + ms).toISOString() };
  }
  if (input.expiresAt !== undefined) {
    const at = parseRfc3339(input.expiresAt);
    if (at === null) return { problem: `expires_at ${JSON.stringify(input.expiresAt.slice(0, 64))} is not an RFC 3339 timestamp with its offset, such as 2030-01-01T00:00:00Z` };
    if (at <= now.getTime()) return { problem: 'expires_at is in the past' };
    return { expiresAt: new Date(at).toISOString() };
  }
  return { expiresAt: null };
}

/** Validates a `POST /v1/tokens` body; 400 naming every problem. */
export function parseCreateToken(body: unknown, now: Date): TokenRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('request body must be a JSON object with at least name');
  const input = body as Record<string, unknown>;
  const problems: string[] = [];
  const unknown = Object.keys(input).filter((k) => !CREATE_FIELDS.includes(k));
  if (unknown.length) problems.push(`unknown field(s): ${unknown.join(', ')} (allowed: ${CREATE_FIELDS.join(', ')})`);
  const { name, access = 'read', project_id: projectId, capabilities = [], user_id: userId } = input;
  // null is "not given", as for project_id: no expiry of its own (the caller's still bounds it)
  const expiresIn = input.expires_in ?? undefined;
  const expiresAt = input.expires_at ?? undefined;
  if (typeof name !== 'string' || name === '') problems.push('name is required');
  else {
    const problem = tokenNameProblem(name);
    if (problem) problems.push(problem);
  }
  if (access !== 'read' && access !== 'write') problems.push('access must be read or write');
  if (projectId !== undefined && projectId !== null && (typeof projectId !== 'string' || !UUID.test(projectId))) problems.push('project_id must be a project id (UUID) or null');
  if (!Array.isArray(capabilities) || !capabilities.every((c) => typeof c === 'string')) problems.push('capabilities must be an array of capability names');
  else {
    const problem = capabilitiesProblem(capabilities as string[]);
    if (problem) problems.push(problem);
  }
  if (expiresIn !== undefined && typeof expiresIn !== 'string') problems.push('expires_in must be a string such as 30d');
  if (expiresAt !== undefined && typeof expiresAt !== 'string') problems.push('expires_at must be an RFC 3339 string');
  if (userId !== undefined && (typeof userId !== 'string' || !UUID.test(userId))) problems.push('user_id must be a UUID');
  let expiry: string | null = null;
  if (typeof (expiresIn ?? '') === 'string' && typeof (expiresAt ?? '') === 'string') {
    const result = expiryFrom({ expiresIn: expiresIn as string | undefined, expiresAt: expiresAt as string | undefined }, now);
    if ('problem' in result) problems.push(result.problem);
    else expiry = result.expiresAt;
  }
  if (problems.length) throw badRequest(problems.join('; '), { problems });
  return {
    name: name as string,
    access: access as Access,
    ...(projectId !== undefined ? { projectUid: projectId as string | null } : {}),
    capabilities: [...new Set(capabilities as string[])].sort(),
    expiresAt: expiry,
    ...(userId !== undefined ? { userId: userId as string } : {}),
  };
}

const forbidden = (reason: string) => new ApiError(403, `${reason}: a token you create can never be wider than your own`);

/**
 * The grant `caller` may hand out for `request`: its own project when it is scoped, its user id
 * unless another is named, its expiry at the latest. 403 when anything would be wider.
 */
export function narrowGrant(caller: Principal, request: TokenRequest): TokenGrant {
  // Acting as someone else (created_by, merged_by, a fire's actor) is an administrator's act.
  const another = request.userId !== undefined && request.userId.toLowerCase() !== caller.userId.toLowerCase();
  if (another && !(caller.projectUid === null && caller.capabilities === '*')) {
    throw new ApiError(403, 'only an unscoped token with every capability (*) may create a token for another user_id; leave user_id out to act as yourself');
  }
  if (request.access === 'write' && caller.access !== 'write') throw forbidden('your token has read access only');
  let projectUid = request.projectUid === undefined ? caller.projectUid : request.projectUid;
  if (caller.projectUid !== null) {
    if (projectUid === null) throw forbidden('your token is scoped to one project, so the new token must be too');
    if (projectUid !== caller.projectUid) throw forbidden('your token is scoped to another project');
    projectUid = caller.projectUid;
  }
  const held = caller.capabilities;
  if (held !== '*') {
    const missing = request.capabilities.filter((c) => c === '*' || !held.has(c));
    if (missing.length) throw forbidden(`your token lacks ${missing.join(', ')}`);
  }
  let expiresAt = request.expiresAt;
  if (caller.expiresAt) {
    if (expiresAt === null) expiresAt = caller.expiresAt;
    else if (Date.parse(expiresAt) > Date.parse(caller.expiresAt)) throw forbidden(`your token expires at ${caller.expiresAt}, before the requested expiry`);
  }
  return {
    name: request.name,
    userId: another ? request.userId! : caller.userId,
    access: request.access,
    projectUid,
    capabilities: request.capabilities,
    expiresAt,
    createdBy: caller.userId,
  };
}

/** A project-scoped caller sees and manages only the tokens of its project. */
export function canManageToken(caller: Principal, info: TokenInfo): boolean {
  return caller.projectUid === null || info.projectUid === caller.projectUid;
}


export function serializeToken(info: TokenInfo, now: Date): SerializedToken {
  return {
    name: info.name,
    user_id: info.userId,
    access: info.access,
    project_id: info.projectUid,
    capabilities: info.capabilities,
    expires_at: info.expiresAt,
    expired: isExpired(info, now),
    created_at: info.createdAt,
    created_by: info.createdBy,
    last_used_at: info.lastUsedAt,
  };
}
