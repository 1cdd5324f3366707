// Reconcile errors by what the runtime does about them: any thrown error retries with backoff;
// a TerminalError does not (retrying cannot help: bad input, a missing reference the user must
// create) and its reason and message land in the object's Ready condition.
export class TerminalError extends Error {
  constructor(
    /** CamelCase condition reason, e.g. `CredentialsNotFound`. */
    readonly reason: string,
    message: string,
  ) {
    super(message);
    this.name = 'TerminalError';
  }
}

export const isTerminal = (error: unknown): error is TerminalError => error instanceof TerminalError;
