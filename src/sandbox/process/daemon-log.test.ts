import { closeSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { DAEMON_LOG_TAIL_BYTES } from '../../resources/session-log.js';
import { openDaemonLog } from './provider.js';

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

it("cuts a sandbox's daemon.log past 64 MiB to its last 256 KiB before svc-agent appends again; a smaller one is kept", () => {
  // an engine's runs (restarts, wakes) add up on the host: nothing trimmed it
  dir = mkdtempSync(path.join(os.tmpdir(), 'svc-daemon-log-'));
  const file = path.join(dir, 'daemon.log');
  writeFileSync(file, Buffer.concat([Buffer.alloc(65 * 1024 * 1024, 'x'), Buffer.from('the end\n')]));
  let fd = openDaemonLog(dir);
  writeSync(fd, 'next run\n');
  closeSync(fd);
  const text = readFileSync(file, 'utf8');
  expect(text.startsWith(`[svc] the log was cut to its last ${DAEMON_LOG_TAIL_BYTES} bytes (it had ${65 * 1024 * 1024 + 8})\n`)).toBe(true);
  expect(text.endsWith('xthe end\nnext run\n')).toBe(true);
  expect(statSync(file).size).toBeLessThan(DAEMON_LOG_TAIL_BYTES + 200);
  const size = statSync(file).size;
  fd = openDaemonLog(dir);
  closeSync(fd);
  expect(statSync(file).size).toBe(size);
});
