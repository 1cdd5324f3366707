// svc-agent's local surface (issue 15): loopback unless SVC_SERVICE_HOST says otherwise, and the
// unauthenticated /svc/health never shows a credential of the repository URL.
import { afterEach, describe, expect, it } from 'vitest';
import net from 'node:net';
import os from 'node:os';
import { rmSync } from 'node:fs';
import { startDaemon, tempDir, type DaemonProcess } from './harness.js';

let daemon: DaemonProcess | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function start(env: Record<string, string>) {
  const workspace = tempDir('svc-listen-ws-');
  const home = tempDir('svc-listen-home-');
  dirs.push(workspace, home);
  return startDaemon({ workspace, home }, env);
}

/** A non-loopback IPv4 address of this machine, if it has one. */
function externalAddress(): string | undefined {
  return Object.values(os.networkInterfaces()).flat().find((i) => i && i.family === 'IPv4' && !i.internal)?.address;
}

function connects(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.once('connect', () => { socket.destroy(); resolve(true); });
    socket.once('error', () => resolve(false));
  });
}

describe('svc-agent listen host', () => {
  it('defaults to 127.0.0.1 (not reachable on other interfaces)', async () => {
    daemon = await start({ SVC_SERVICE_HOST: '' });
    expect(daemon.output()).toMatch(/svc-agent listening on http:\/\/127\.0\.0\.1:\d+/);
    const external = externalAddress();
    if (external) expect(await connects(external, daemon.port)).toBe(false);
    expect(await connects('127.0.0.1', daemon.port)).toBe(true);
  });

  it('listens on 0.0.0.0 when SVC_SERVICE_HOST says so (the sandbox pod)', async () => {
    daemon = await start({ SVC_SERVICE_HOST: '0.0.0.0' });
    expect(daemon.output()).toMatch(/svc-agent listening on http:\/\/0\.0\.0\.0:\d+/);
    const external = externalAddress();
    if (external) expect(await connects(external, daemon.port)).toBe(true);
  });
});

describe('/svc/health', () => {
  it('shows the repository URL without userinfo or credential query parameters', async () => {
    daemon = await start({ SVC_REPO_URL: 'https://oauth2:glpat-SECRET1@gitlab.example/g/r.git?private_token=SECRET2&ref=main' });
    const text = await (await fetch(`${daemon.url}/svc/health`)).text();
    expect(text).not.toMatch(/SECRET/);
    expect(JSON.parse(text).repository.url).toBe('https://***@gitlab.example/g/r.git?private_token=***&ref=main');
  });
});
