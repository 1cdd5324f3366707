// `svc sessions start --prompt-file` and `svc sessions prompt --file`: a long prompt from a file
// or stdin, sent as written. A loopback server plays the API and records what it was sent.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SVC_BIN } from './run-cli.js';

const PROJECT = '6372d770-47f0-41fb-b668-84a73d370054';
const SESSION = 'a402e77f-9371-4ce9-aae3-792e37f17fc2';
const TASK = '# Task\n\nFix the failing test in `src/a.ts`:\n- keep the API\n- add a case for "x < y"\n';
let server: http.Server;
let apiUrl: string;
let dir: string;
const received: { method: string; url: string; body: Record<string, unknown> }[] = [];

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'svc-prompt-file-'));
  writeFileSync(path.join(dir, 'task.md'), TASK);
  server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => { raw += c.toString(); });
    req.on('end', () => {
      received.push({ method: req.method!, url: req.url!, body: raw ? JSON.parse(raw) as Record<string, unknown> : {} });
      const session = { id: SESSION, status: 'running', desired_state: 'running', pending_prompts: 0 };
      res.writeHead(req.url!.endsWith('/prompt') ? 202 : 201, { 'content-type': 'application/json' }).end(JSON.stringify({ session }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

function svc(args: string[], stdin?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [SVC_BIN, ...args, '--project', PROJECT], {
    cwd: dir, env: { ...process.env, SVC_API_URL: apiUrl, SVC_CLI_TOKEN: 'svc_test', NO_COLOR: '1' }, stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => { stdout += c.toString(); });
  child.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
  child.stdin.end(stdin ?? '');
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

describe('a prompt from a file', () => {
  it('svc sessions start --prompt-file: the file as written (one trailing newline dropped); - reads stdin', async () => {
    received.length = 0;
    expect((await svc(['sessions', 'start', '--prompt-file', 'task.md', '-q'])).stdout).toBe(`${SESSION}\n`);
    expect((await svc(['sessions', 'start', '--prompt-file', '-', '-q'], 'from a pipe\n')).code).toBe(0);
    expect(received.map((r) => [r.method, r.url, r.body.prompt])).toEqual([
      ['POST', `/v1/projects/${PROJECT}/sessions`, TASK.slice(0, -1)],
      ['POST', `/v1/projects/${PROJECT}/sessions`, 'from a pipe'],
    ]);
  });

  it('svc sessions prompt ID --file: the same for a follow-up', async () => {
    received.length = 0;
    expect((await svc(['sessions', 'prompt', SESSION, '--file', path.join(dir, 'task.md')])).code).toBe(0);
    expect(received.map((r) => [r.url, r.body])).toEqual([[`/v1/projects/${PROJECT}/sessions/${SESSION}/prompt`, { text: TASK.slice(0, -1) }]]);
  });

  it('both, neither or a missing file: a usage error saying which, nothing sent', async () => {
    received.length = 0;
    expect(await svc(['sessions', 'start', '--prompt', 'x', '--prompt-file', 'task.md'])).toMatchObject({ code: 2, stderr: 'svc: give the first prompt once: --prompt TEXT or --prompt-file PATH\n' });
    expect(await svc(['sessions', 'start', '--prompt-file', 'nope.md'])).toMatchObject({ code: 2, stderr: 'svc: --prompt-file nope.md: no such file\n' });
    expect(await svc(['sessions', 'prompt', SESSION])).toMatchObject({ code: 2, stderr: 'svc: no prompt given: pass it as TEXT after the session id, or --file PATH (- reads stdin)\n' });
    expect(await svc(['sessions', 'prompt', SESSION, 'x', '--file', 'task.md'])).toMatchObject({ code: 2, stderr: 'svc: give the prompt once: as TEXT after the session id, or --file PATH\n' });
    expect(received).toEqual([]);
  });
});
