// Structured logs: one JSON object per line on stdout (warn and error too: one stream for log
// collectors), with a level, the component, the message and the resource's namespace/name when
// there is one. Values that look like credentials are replaced before anything is written.
import { redactUrls } from './redact-url.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

const SECRET_FIELD = /token|secret|password|passwd|authorization|credential|cookie|api[-_]?key/i;
// svc's own token formats: personal access tokens and sandbox tokens
const TOKEN_TEXT = /\bsvc_[A-Za-z0-9_-]{20,}|\bsvcsbx\.[A-Za-z0-9-]+\.[A-Za-z0-9_-]{20,}|\bBearer\s+[A-Za-z0-9._~+/=-]+/g;

/** `text` with URL credentials and svc tokens masked. */
export function redactText(text: string): string {
  return redactUrls(text).replace(TOKEN_TEXT, (m) => (m.startsWith('Bearer') ? 'Bearer ***' : '***'));
}

function clean(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redactText(value);
  if (value instanceof Error) return redactText(value.message);
  if (Array.isArray(value)) return depth > 3 ? '[…]' : value.map((v) => clean(v, depth + 1));
  if (value && typeof value === 'object') {
    if (depth > 3) return '[…]';
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, SECRET_FIELD.test(k) ? '***' : clean(v, depth + 1)]));
  }
  return value;
}

/** One log line (exported for tests). */
export function logLine(level: LogLevel, component: string, message: string, fields: LogFields = {}, now = new Date()): string {
  const rest = clean(fields) as LogFields;
  return JSON.stringify({ time: now.toISOString(), level, component, msg: redactText(message), ...rest });
}

export function createLogger(component: string, options: { write?: (line: string) => void; minLevel?: LogLevel } = {}): Logger {
  const write = options.write ?? ((line: string) => process.stdout.write(`${line}\n`));
  const order: LogLevel[] = ['debug', 'info', 'warn', 'error'];
  const min = order.indexOf(options.minLevel ?? ((process.env.SVC_LOG_LEVEL as LogLevel | undefined) && order.includes(process.env.SVC_LOG_LEVEL as LogLevel) ? process.env.SVC_LOG_LEVEL as LogLevel : 'info'));
  const at = (level: LogLevel) => (message: string, fields?: LogFields) => {
    if (order.indexOf(level) >= min) write(logLine(level, component, message, fields));
  };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
