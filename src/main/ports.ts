// Ports `svc dev` is asked to use: a clear error before anything starts when one is taken,
// rather than a child process that dies after dev said it was running.
import net from 'node:net';

export class PortInUseError extends Error {
  constructor(readonly port: number, readonly host: string, flag: string) {
    super(`port ${port} on ${host} is already in use (${flag}): stop what listens there, or pick another port with ${flag} N (0 = any free port)`);
    this.name = 'PortInUseError';
  }
}

/** Resolves when `port` can be bound on `host` (0 always can); PortInUseError otherwise. */
export async function assertPortFree(port: number, host: string, flag: string): Promise<void> {
  if (port === 0) return;
  await new Promise<void>((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => {
      reject(error.code === 'EADDRINUSE' || error.code === 'EACCES' ? new PortInUseError(port, host, flag) : error);
    });
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve()));
  });
}

/**
 * The ports browsers and Node's fetch refuse to connect to (the Fetch standard's "bad ports";
 * Node 20 answers `bad port` for exactly these, without connecting).
 */
const FETCH_BAD_PORTS: ReadonlySet<number> = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110, 111,
  113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532, 540, 548,
  554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566,
  6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);

/**
 * Throws when clients reach `port` with fetch and fetch refuses it: the API's (the dashboard, the
 * CLI, svc dev's readiness wait) and the local cluster's (svc dev's own cluster client).
 */
export function assertFetchablePort(port: number, flag: string, reachedBy: string): void {
  if (FETCH_BAD_PORTS.has(port)) {
    throw new Error(`${flag} ${port}: browsers and Node's fetch refuse to connect to that port (a "bad port" of the Fetch standard), so ${reachedBy}: pick another port (0 = any free port)`);
  }
}
