// The node simulator's HTTP probes against real servers on loopback playing a container: it
// answers what it likes, so a probe reads at most 10 KiB of it and follows no redirect (the
// kubelet's rules). An endless answer was read for the whole probe timeout, hundreds of MB held.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { runProbe } from './pod.js';

const servers: http.Server[] = [];
afterEach(async () => { for (const s of servers.splice(0)) { s.closeAllConnections(); await new Promise((r) => s.close(r)); } });

async function listen(handler: http.RequestListener): Promise<number> {
  const server = http.createServer(handler);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
}

const container = { name: 'c' };
const probe = (port: number) => runProbe({ httpGet: { port, path: '/healthz' }, timeoutSeconds: 30 }, '127.0.0.1', container);

it('reads at most 10 KiB of an endless answer, then lets the container go', async () => {
  let sent = 0;
  let closed!: () => void;
  const gone = new Promise<void>((resolve) => { closed = resolve; });
  const port = await listen((req, res) => {
    res.writeHead(200);
    const piece = Buffer.alloc(64 * 1024, 0x61);
    const more = () => { while (!res.destroyed && res.write(piece)) sent += piece.length; if (!res.destroyed) res.once('drain', more); };
    res.on('close', closed);
    more();
  });
  expect(await probe(port)).toEqual({ ok: true, message: '' });
  await gone;
  expect(sent).toBeLessThan(16 * 1024 * 1024); // what the sockets' buffers took, not the probe's 30 s of it
});

it('does not follow a redirect: a 3xx counts as success, as the kubelet has it, and the target hears nothing', async () => {
  const heard: string[] = [];
  const target = await listen((req, res) => { heard.push(req.url ?? ''); res.end('ok'); });
  const port = await listen((_req, res) => res.writeHead(302, { location: `http://127.0.0.1:${target}/internal` }).end());
  expect(await probe(port)).toEqual({ ok: true, message: '' });
  expect(heard).toEqual([]);
  const failing = await listen((_req, res) => res.writeHead(500).end('no'));
  expect(await probe(failing)).toEqual({ ok: false, message: 'HTTP probe failed with statuscode: 500' });
});
