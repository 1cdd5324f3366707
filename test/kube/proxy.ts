/** A loopback TCP proxy that can drop its connections and hold new ones: a flaky network on demand. */
import net from 'node:net';
import type { AddressInfo } from 'node:net';

export interface FlakyProxy {
  url: string;
  /** Destroys every open connection (a dropped watch). */
  dropAll(): void;
  /** New connections wait until release(). */
  hold(): void;
  release(): void;
  /** Connections accepted so far. */
  connections(): number;
  close(): Promise<void>;
}

export async function startFlakyProxy(target: string): Promise<FlakyProxy> {
  const { hostname, port, protocol } = new URL(target);
  const sockets = new Set<net.Socket>();
  let held: (() => void)[] | undefined;
  let accepted = 0;
  const server = net.createServer((client) => {
    accepted++;
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    client.pause();
    const connect = () => {
      if (client.destroyed) return;
      const upstream = net.connect(Number(port), hostname);
      sockets.add(upstream);
      upstream.on('close', () => {
        sockets.delete(upstream);
        client.destroy();
      });
      upstream.on('error', () => upstream.destroy());
      client.on('close', () => upstream.destroy());
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    };
    if (held) held.push(connect);
    else connect();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `${protocol}//127.0.0.1:${(server.address() as AddressInfo).port}`,
    dropAll: () => sockets.forEach((s) => s.destroy()),
    hold: () => {
      held ??= [];
    },
    release: () => {
      const waiting = held ?? [];
      held = undefined;
      waiting.forEach((connect) => connect());
    },
    connections: () => accepted,
    close: () =>
      new Promise<void>((resolve) => {
        sockets.forEach((s) => s.destroy());
        server.close(() => resolve());
      }),
  };
}
