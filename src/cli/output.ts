// Output helpers every command group shares: exit codes, JSON, tables, errors. Pure formatting
// plus thin writes to stdout/stderr; keep heavy imports out (loaded on every start).

/** 0 ok, 1 the input is invalid, 2 usage error or unreadable path. */
export const EXIT = { ok: 0, invalid: 1, usage: 2 } as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** An error the user caused; main prints `svc: <message>` on stderr and exits with `exitCode`. */
export class CliError extends Error {
  constructor(message: string, readonly exitCode: ExitCode = EXIT.usage) {
    super(message);
  }
}

/** Sets the exit code without cutting stdout short (process.exit could drop piped output). */
export function setExitCode(code: ExitCode): void {
  process.exitCode = code;
}

/** Errors of a write to stdout or stderr that mean nobody reads it any more: a closed pipe, a hung-up terminal. */
const READER_GONE = new Set(['EPIPE', 'EIO', 'ERR_STREAM_DESTROYED']);
let runsUntilStopped = false;

/**
 * For a command that runs until it is stopped (`svc dev`): when its reader goes away (`| tee`
 * killed, a terminal closed) it keeps running with its output dropped, so that a signal still
 * stops it cleanly. Any other command then stops quietly, as Unix tools do.
 */
export function keepRunningWithoutReader(): void {
  runsUntilStopped = true;
}

/** main's handler of an error of stdout or stderr. */
export function onOutputError(error: NodeJS.ErrnoException): void {
  if (!READER_GONE.has(error.code ?? '')) throw error;
  if (!runsUntilStopped) process.exit(0);
}

/** Exactly one JSON document on stdout. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function printLines(lines: readonly string[], stream: NodeJS.WritableStream = process.stdout): void {
  if (lines.length > 0) stream.write(`${lines.join('\n')}\n`);
}

/** Left-aligned columns separated by two spaces, header in upper case. */
export function formatTable(headers: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(headers.map((h) => h.toUpperCase())), ...rows.map(line)];
}

/** Text for `addHelpText('after', ...)`: one `$ command` line per example with its comment. */
export function examples(list: readonly [command: string, comment: string][]): string {
  const width = Math.max(...list.map(([c]) => c.length));
  return `\nExamples:\n${list.map(([c, comment]) => `  $ ${c.padEnd(width)}  # ${comment}`).join('\n')}\n`;
}
