// Every call the dashboard makes goes through /v1 with the bearer token the person signed in
// with. The token lives in sessionStorage: this tab only, gone when it closes or on sign-out.
const TOKEN_KEY = 'svc.token';

export function storedToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function storeToken(token: string | null): void {
  if (token === null) sessionStorage.removeItem(TOKEN_KEY);
  else sessionStorage.setItem(TOKEN_KEY, token);
}

/** A non-2xx answer: the status and the server's JSON body (`{ error, code?, ... }`). */
export class HttpError extends Error {
  constructor(readonly status: number, readonly body: Record<string, unknown>) {
    super(typeof body.error === 'string' ? body.error : `request failed with status ${status}`);
  }
}

let onUnauthorized: (why: string) => void = () => {};
/** Called with the server's words when it no longer accepts the token (revoked or expired while signed in). */
export function whenUnauthorized(handler: (why: string) => void): void {
  onUnauthorized = handler;
}

/** An answer's body as JSON; a body that is not JSON as `{ error: <its start> }`. */
function parseBody(text: string): Record<string, unknown> {
  if (!text) return {};
  try { return (JSON.parse(text) ?? {}) as Record<string, unknown>; } catch { return { error: text.slice(0, 500) }; }
}

/** The HttpError of a non-2xx answer, with the server's words. */
export async function httpError(res: Response): Promise<HttpError> {
  return new HttpError(res.status, parseBody(await res.text().catch(() => '')));
}

export async function api<T>(method: string, path: string, body?: unknown, token = storedToken()): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (!res.ok) {
    const error = await httpError(res);
    if (res.status === 401 && token === storedToken()) onUnauthorized(error.message);
    throw error;
  }
  return parseBody(await res.text()) as T;
}

/** What the token may do (GET /v1/me). */
export interface Me {
  user_id: string;
  access: 'read' | 'write';
  project_id: string | null;
  capabilities: string[];
}

export const CAP = {
  push: 'project.gitops.push',
  merge: 'project.gitops.merge',
  sessionStart: 'project.session.start',
  sessionStop: 'project.session.stop',
  secretWrite: 'project.secret.write',
  triggerFire: 'project.trigger.fire',
  triggerUpdate: 'project.trigger.update',
} as const;

/** Whether the token may write, with the capability when one is named (the server's rule). */
export function canWrite(me: Me, capability?: string): boolean {
  if (me.access !== 'write') return false;
  return !capability || me.capabilities.includes('*') || me.capabilities.includes(capability);
}

export const enc = encodeURIComponent;
