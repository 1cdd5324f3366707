// sendPrompts against a real HTTP server on loopback playing the session's daemon: it is
// untrusted, so its redirects are not followed (they sent the operator's POST, prompt and signed
// header included, wherever the sandbox chose, and counted the prompt as delivered).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import type { KubeClient } from '../../src/kube/index.js';
import type { Session } from '../../src/resources/index.js';
import { sendPrompts } from './steps.js';

const servers: http.Server[] = [];
afterEach(async () => { for (const s of servers.splice(0)) await new Promise((r) => s.close(r)); });

async function listen(handler: http.RequestListener): Promise<string> {
  const server = http.createServer(handler);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const secret = { data: { sandboxToken: Buffer.from('sandbox-token').toString('base64'), cliToken: Buffer.from('cli-token').toString('base64') } };
const client = { resource: () => ({ find: async () => secret }) } as unknown as KubeClient;
const session = { metadata: { name: 's1', namespace: 'default', uid: 'u' }, spec: { createdBy: 'user' } } as unknown as Session;
const step = (address: string) => ({ kind: 'deliver-prompts' as const, address, rootSessionId: 'root', prompts: [{ id: 'p1', text: 'secret prompt text', at: '', by: 'user' }] });

it('delivers to the daemon that takes the prompt', async () => {
  const got: string[] = [];
  const address = await listen((req, res) => { got.push(`${req.method} ${req.url}`); req.resume(); res.writeHead(204).end(); });
  expect(await sendPrompts(client, session, step(address) as never)).toEqual(['p1']);
  expect(got).toEqual(['POST /session/root/prompt_async']);
});

it('does not follow a redirect, and the prompt stays to be delivered', async () => {
  const elsewhere: string[] = [];
  const internal = await listen((req, res) => { elsewhere.push(`${req.method} ${req.url} ${req.headers['x-svc-user-context'] ? 'signed' : ''}`); req.resume(); res.end('{}'); });
  for (const status of [307, 303]) {
    const address = await listen((req, res) => { req.resume(); res.writeHead(status, { location: `http://${internal}/internal` }).end(); });
    expect(await sendPrompts(client, session, step(address) as never)).toEqual([]);
  }
  expect(elsewhere).toEqual([]);
});
