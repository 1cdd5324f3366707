// A real OpenSSH server (Debian's openssh-server) for the SSH repository tests: its own config,
// host key, user key and authorized_keys in a temporary directory, on a free loopback port,
// in the foreground (-D -e). The user key may only run git (a forced git-shell command), so the
// login as the machine's own user (root in CI: creating users is machine-global) reaches
// nothing but the repositories.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, chmodSync, existsSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export const SSHD = '/usr/sbin/sshd';

export interface KeyPair { privateKey: string; publicKey: string; file: string }

export interface Sshd {
  port: number;
  /** The login name (this process's user). */
  user: string;
  /** `ssh://user@127.0.0.1:port/<absolute path>` */
  url(repoPath: string): string;
  /** A key the server accepts. */
  userKey: KeyPair;
  /** The server's host key as a known_hosts line (`[127.0.0.1]:port ssh-ed25519 ...`). */
  knownHosts: string;
  /** What sshd logged so far (-e: to stderr). */
  log(): string;
  close(): Promise<void>;
}

/** A new ed25519 key pair (no passphrase) in `dir`. */
export function generateKey(dir: string, name: string): KeyPair {
  const file = path.join(dir, name);
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', file]);
  return { privateKey: readFileSync(file, 'utf8'), publicKey: readFileSync(`${file}.pub`, 'utf8').trim(), file };
}

/** `publicKey` as the known_hosts line for 127.0.0.1:`port`. */
export function knownHostsLine(port: number, publicKey: string): string {
  const [type, key] = publicKey.split(/\s+/);
  return `[127.0.0.1]:${port} ${type} ${key}\n`;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function accepting(port: number, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`sshd exited ${child.exitCode}:\n${log()}`);
    const ok = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('data', () => { socket.destroy(); resolve(true); }); // the SSH banner
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`sshd did not listen on ${port}:\n${log()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function startSshd(): Promise<Sshd> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-sshd-'));
  chmodSync(dir, 0o755);
  // privilege separation needs this directory (the openssh-server service creates it at boot)
  if (process.getuid?.() === 0 && !existsSync('/run/sshd')) mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  const hostKey = generateKey(dir, 'host_key');
  const userKey = generateKey(dir, 'user_key');
  const authorized = path.join(dir, 'authorized_keys');
  writeFileSync(authorized, `command="git-shell -c \\"$SSH_ORIGINAL_COMMAND\\"",no-port-forwarding,no-agent-forwarding,no-X11-forwarding,no-pty ${userKey.publicKey}\n`, { mode: 0o600 });
  const port = await freePort();
  const user = os.userInfo().username;
  const config = path.join(dir, 'sshd_config');
  writeFileSync(config, [
    `Port ${port}`,
    'ListenAddress 127.0.0.1',
    `HostKey ${hostKey.file}`,
    `PidFile ${path.join(dir, 'sshd.pid')}`,
    `AuthorizedKeysFile ${authorized}`,
    'StrictModes no',
    'PubkeyAuthentication yes',
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    'UsePAM no',
    'PermitRootLogin prohibit-password',
    `AllowUsers ${user}`,
    'PermitUserEnvironment no',
    'AllowTcpForwarding no',
    'X11Forwarding no',
    'PrintMotd no',
    'LogLevel VERBOSE',
    '',
  ].join('\n'));
  let output = '';
  const child = spawn(SSHD, ['-D', '-e', '-f', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (c: Buffer) => { output += c.toString(); });
  child.stderr!.on('data', (c: Buffer) => { output += c.toString(); });
  const log = () => output;
  try {
    await accepting(port, child, log);
  } catch (error) {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    port,
    user,
    url: (repoPath) => `ssh://${user}@127.0.0.1:${port}${repoPath}`,
    userKey,
    knownHosts: knownHostsLine(port, hostKey.publicKey),
    log,
    async close() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
