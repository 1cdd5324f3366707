// The credential helper command git runs: node (the helper relaying to the broker) only where
// the broker has something to answer.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { shellQuote } from '../src/lib/shell-quote.js';
import { CredentialBroker } from './credentials.js';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'svc-cred-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('the credential helper command', () => {
  it("starts node for get and erase only: git's store after every authenticated push starts nothing", () => {
    const socket = path.join(tmp, 'it has spaces', 'git-credential.sock');
    const command = new CredentialBroker({ apiUrl: 'http://127.0.0.1:1', projectId: 'p', sandboxToken: 't', repoUrl: 'https://git.example/r.git' }, socket).helperCommand();
    expect(command.startsWith('!')).toBe(true);
    // a stand-in for node that records how it was started
    const log = path.join(tmp, 'calls');
    const node = path.join(tmp, 'node');
    writeFileSync(node, `#!/bin/sh\nprintf '%s|' "$@" >> ${shellQuote(log)}\necho >> ${shellQuote(log)}\n`, { mode: 0o755 });
    writeFileSync(log, '');
    const shell = command.slice(1).replace(shellQuote(process.execPath), shellQuote(node));
    // as git runs it: the shell command with the operation appended, git's request on stdin (a
    // helper that exits without reading it is no error: git ignores the broken pipe, as here)
    for (const operation of ['get', 'store', 'erase']) {
      const run = spawnSync('sh', ['-c', `${shell} ${operation}`], { input: 'protocol=https\nhost=git.example\n\n' });
      if (run.error && (run.error as NodeJS.ErrnoException).code !== 'EPIPE') throw run.error;
      expect(run.status, `${operation}: ${String(run.stderr)}`).toBe(0);
    }
    const helper = fileURLToPath(new URL('./credential-helper.js', import.meta.url));
    expect(readFileSync(log, 'utf8')).toBe(`${helper}|${socket}|get|\n${helper}|${socket}|erase|\n`);
  });
});
