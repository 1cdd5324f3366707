// A small structured logger: one line per entry, `level=... msg="..." key=value ...` (logfmt),
// with fields bound once (controller, object) so every line of a reconcile says what it is about.

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

function value(v: string | number | boolean | null): string {
  const text = String(v);
  return /^[^\s"=]+$/.test(text) ? text : JSON.stringify(text);
}

/** Formats one logfmt line (without the newline); undefined fields are left out. */
export function logLine(level: LogLevel, msg: string, fields: LogFields): string {
  const parts = [`level=${level}`, `msg=${value(msg)}`];
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) parts.push(`${k}=${value(v)}`);
  return parts.join(' ');
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
