// Pure request validation for the session routes: every bad input is a 400 that names the
// problem, found before anything is read or written.
import { branchNameProblem } from '../../git/index.js';
import { SESSION_STATUSES, type SessionStatusValue } from '../../resources/index.js';
import { MAX_PROMPT_BYTES } from '../../sessions/index.js';
import { badRequest } from '../errors.js';


const SLUG = /^[a-z0-9][a-z0-9_-]{0,127}$/;
const MODEL = /^[A-Za-z0-9._-]+\/[A-Za-z0-9._:/@-]+$/;

export interface StartRequest { agent?: string; baseRef?: string; prompt?: string; model?: string }

function objectBody(body: unknown, allowed: readonly string[], what: string): Record<string, unknown> {
  if (body === undefined) return {};
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest(`${what}: the body must be a JSON object`);
  const input = body as Record<string, unknown>;
  const unknown = Object.keys(input).filter((k) => !allowed.includes(k));
  if (unknown.length) throw badRequest(`${what}: unknown field(s) ${unknown.join(', ')} (allowed: ${allowed.join(', ')})`);
  return input;
}

function optionalString(input: Record<string, unknown>, field: string): string | undefined {
  const value = input[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw badRequest(`${field} must be a string`);
  return value;
}

function promptText(value: string, field: string): string {
  if (value.includes('\0')) throw badRequest(`${field} must not contain a NUL character`);
  if (Buffer.byteLength(value, 'utf8') > MAX_PROMPT_BYTES) throw badRequest(`${field} is larger than ${MAX_PROMPT_BYTES} bytes`);
  return value;
}

/** POST /sessions `{ agent?, base_ref?, prompt?, model? }`. */
export function parseStart(body: unknown): StartRequest {
  const input = objectBody(body, ['agent', 'base_ref', 'prompt', 'model'], 'start a session');
  const out: StartRequest = {};
  const agent = optionalString(input, 'agent');
  if (agent !== undefined) {
    if (!SLUG.test(agent)) throw badRequest(`agent ${JSON.stringify(agent)} is not an agent name (lower-case letters, digits, _ and -, at most 128)`);
    out.agent = agent;
  }
  const baseRef = optionalString(input, 'base_ref');
  if (baseRef !== undefined) {
    const problem = /^[0-9a-f]{40}$/.test(baseRef) ? null : branchNameProblem(baseRef.replace(/^refs\/heads\//, ''));
    if (problem) throw badRequest(`base_ref ${JSON.stringify(baseRef)}: ${problem}`);
    out.baseRef = baseRef.replace(/^refs\/heads\//, '');
  }
  const prompt = optionalString(input, 'prompt');
  if (prompt !== undefined && prompt.trim() !== '') out.prompt = promptText(prompt, 'prompt');
  const model = optionalString(input, 'model');
  if (model !== undefined) {
    if (!MODEL.test(model)) throw badRequest(`model ${JSON.stringify(model)} must be <provider>/<model>`);
    out.model = model;
  }
  return out;
}

/** POST /sessions/:id/prompt `{ text }`. */
export function parsePrompt(body: unknown): string {
  const input = objectBody(body, ['text'], 'prompt');
  const text = optionalString(input, 'text');
  if (text === undefined || text.trim() === '') throw badRequest('text is required: the prompt to send to the session');
  return promptText(text, 'text');
}

/** GET /sessions?status=... (absent or `all`: every session). */
export function parseStatusFilter(value: unknown): SessionStatusValue | undefined {
  if (value === undefined || value === '' || value === 'all') return undefined;
  if (typeof value !== 'string' || !(SESSION_STATUSES as readonly string[]).includes(value)) {
    throw badRequest(`status must be one of ${SESSION_STATUSES.join(', ')}, all (got ${JSON.stringify(value)})`);
  }
  return value as SessionStatusValue;
}


/** A port inside the sandbox for /proxy/:port. */
export function parsePort(value: string): number {
  const port = /^[1-9]\d{0,4}$/.test(value) ? Number(value) : NaN; // one way to write each port: not 080
  if (!(port >= 1 && port <= 65535)) throw badRequest(`port ${JSON.stringify(value)} must be 1-65535`);
  return port;
}

export interface AgentChoice { agent: string }

/**
 * The agent a new session runs (issue 10): version 2 manifests name their agents (an unknown
 * one is 400) and a default_agent; otherwise the request's agent, else `default`.
 */
export function chooseAgent(requested: string | undefined, manifest: unknown, branch: string): string {
  const doc = manifest as { svc_version?: unknown; default_agent?: unknown; agents?: unknown } | null | undefined;
  if (doc?.svc_version !== 2 || typeof doc.agents !== 'object' || doc.agents === null || Array.isArray(doc.agents)) return requested ?? 'default';
  const names = Object.keys(doc.agents);
  const agent = requested ?? (typeof doc.default_agent === 'string' ? doc.default_agent : 'default');
  if (!names.includes(agent)) {
    throw badRequest(`unknown agent ${JSON.stringify(agent)}: the manifest on ${branch} declares ${names.length ? names.join(', ') : 'no agents'}`);
  }
  return agent;
}
