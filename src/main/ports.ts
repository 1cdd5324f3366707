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
