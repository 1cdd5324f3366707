// A small structured logger: one JSON object per line (`time`, `level`, `msg`, then fields), with
// fields bound once (component, controller, object = namespace/name) so every line of a reconcile
// says what it is about. Values that look like credentials are masked before anything is written.
import { redactUrls } from './redact-url.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFields = Record<string, string | number | boolean | null | undefined>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /** A logger that adds `fields` to every line. */
  with(fields: LogFields): Logger;
}

const SECRET_FIELD = /token|secret|password|passwd|authorization|credential|cookie|api[-_]?key/i;
// svc's own token formats (personal access tokens, sandbox tokens, model-gateway keys) and bearer headers
const TOKEN_TEXT = /\bsvc_[A-Za-z0-9_-]{20,}|\bsvc(?:sbx|llm)\.[A-Za-z0-9-]+\.[A-Za-z0-9_-]{20,}|\bBearer\s+[A-Za-z0-9._~+/=-]+/g;

/** `text` with URL credentials and svc tokens masked. */
export function redactText(text: string): string {
  return redactUrls(text).replace(TOKEN_TEXT, (m) => (m.startsWith('Bearer') ? 'Bearer ***' : '***'));
}

/** Formats one JSON line (without the newline); undefined fields are left out. */
export function logLine(level: LogLevel, msg: string, fields: LogFields, now = new Date()): string {
  const entry: Record<string, unknown> = { time: now.toISOString(), level, msg: redactText(msg) };
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined || k === 'time' || k === 'level' || k === 'msg') continue;
    entry[k] = SECRET_FIELD.test(k) ? '***' : typeof v === 'string' ? redactText(v) : v;
  }
  return JSON.stringify(entry);
}

/** `write` gets each line; debug lines only when `debug` is true. */
export function createLogger(write: (line: string) => void, options: { debug?: boolean; fields?: LogFields } = {}): Logger {
  const bound = options.fields ?? {};
  const emit = (level: LogLevel) => (msg: string, fields: LogFields = {}) => {
    if (level === 'debug' && !options.debug) return;
    write(logLine(level, msg, { ...bound, ...fields }));
  };
  return {
    debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error'),
    with: (fields) => createLogger(write, { ...options, fields: { ...bound, ...fields } }),
  };
}

/** Discards everything (tests, callers without a log). */
export const silentLogger: Logger = createLogger(() => undefined);
