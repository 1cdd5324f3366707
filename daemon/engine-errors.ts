// Why the engine is not working, in words a person can act on: the last lines it wrote to
// stderr (bounded) and the cause of its last exit ("cannot reach the model" while opencode
// retries a prompt is src/lib/model-error.ts, shared with the CLI). /svc/health answers them
// without authentication, so every line is redacted: URL credentials and the values of the
// sandbox's secrets never leave.
import { MIN_SECRET_LENGTH } from '../src/lib/redact-secrets.js';
import { clipText } from '../src/lib/clip.js';

export { redactSecrets } from '../src/lib/redact-secrets.js';

/** Lines kept, and the longest line kept. */
export const STDERR_TAIL_LINES = 20;
const MAX_LINE = 500;

/** The last lines an engine wrote to stderr, bounded in count and length. */
export class StderrTail {
  private readonly kept: string[] = [];
  private partial = '';

  push(chunk: string): void {
    const parts = (this.partial + chunk).split('\n');
    this.partial = (parts.pop() ?? '').slice(-MAX_LINE);
    for (const line of parts) this.add(line);
  }

  /** Forget what an earlier run wrote (a new start). */
  clear(): void {
    this.kept.length = 0;
    this.partial = '';
  }

  lines(): string[] {
    return this.partial ? [...this.kept, this.partial] : [...this.kept];
  }

  private add(line: string): void {
    const trimmed = line.trimEnd();
    if (!trimmed) return;
    this.kept.push(clipText(trimmed, MAX_LINE + 1));
    if (this.kept.length > STDERR_TAIL_LINES) this.kept.shift();
  }
}

/** What an exit says: its code or signal and the engine's last stderr lines. */
export function exitCause(exit: { code: number | null; signal: string | null }, stderr: readonly string[]): string {
  const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
  const said = stderr.slice(-5).join(' | ');
  return said ? `the engine ${how}: ${said}` : `the engine ${how} without writing to stderr`;
}


/** Values that must not appear in what health shows: the tokens and the project secrets of this sandbox. */
export function secretValues(env: NodeJS.ProcessEnv): string[] {
  const names = ['SVC_SANDBOX_TOKEN', 'SVC_TOKEN', 'SVC_CLI_TOKEN', 'SVC_EXECUTOR_TOKEN', ...(env.SVC_PROJECT_SECRET_NAMES ?? '').split(',')];
  return names.map((name) => (name ? env[name] : undefined)).filter((value): value is string => typeof value === 'string' && value.length >= MIN_SECRET_LENGTH);
}

