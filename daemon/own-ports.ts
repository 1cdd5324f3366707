// Which ports `/proxy/{port}` may reach: the sandbox's own, never the host's (issue 20 §1).
//
// A sandbox with its own network namespace (a jail, a Pod: SVC_SANDBOX_OWN_NETWORK=1) owns every
// port of its loopback, so any port will do. Without one (`svc dev --unsafe-no-isolation`), the
// loopback is the host's: a port is the sandbox's only when a process of the daemon's own tree
// (the engine, what the agent started from it) listens on it, found through /proc; anything else
// (the local cluster, the API, another sandbox's daemon, a program that left the tree) is refused,
// and so is everything where /proc cannot tell.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { processTree } from '../src/lib/proc.js';

/** Listening TCP sockets on `port` that 127.0.0.1 reaches (loopback or wildcard), as socket inodes. */
function listeningInodes(port: number): Set<string> {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try { text = readFileSync(table, 'utf8'); } catch { continue; }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10 || fields[3] !== '0A') continue; // 0A: LISTEN
      const [address, hexPort] = fields[1]!.split(':') as [string, string];
      if (parseInt(hexPort, 16) !== port || !reachesLoopback(address)) continue;
      inodes.add(fields[9]!);
    }
  }
  return inodes;
}

/** /proc/net/tcp{,6} addresses (hex, host byte order per 32-bit word) that 127.0.0.1 connects to. */
function reachesLoopback(hex: string): boolean {
  if (hex.length === 8) return hex === '00000000' || hex.endsWith('7F'); // 0.0.0.0, 127.x.x.x
  // ::, ::1, ::ffff:0.0.0.0, ::ffff:127.x
  return hex === '0'.repeat(32) || hex === '00000000000000000000000001000000' || /^0000000000000000FFFF0000(00000000|[0-9A-F]{6}7F)$/.test(hex);
}

function holdsSocket(pid: number, inodes: Set<string>): boolean {
  let fds: string[];
  try { fds = readdirSync(`/proc/${pid}/fd`); } catch { return false; }
  for (const fd of fds) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m && inodes.has(m[1]!)) return true;
    } catch { /* closed meanwhile */ }
  }
  return false;
}

export class PortGuard {
  private readonly allowedUntil = new Map<number, number>();

  /** `ownNetwork`: the sandbox has a network namespace of its own (SVC_SANDBOX_OWN_NETWORK=1). */
  constructor(private readonly ownNetwork = process.env.SVC_SANDBOX_OWN_NETWORK === '1', private readonly root = process.pid) {}

  /** Why `port` may not be proxied (status and message), or null when it may. */
  refusal(port: number): { status: number; error: string } | null {
    if (this.ownNetwork) return null;
    if ((this.allowedUntil.get(port) ?? 0) > Date.now()) return null;
    let inodes: Set<string>;
    try {
      inodes = listeningInodes(port);
      if (inodes.size === 0) return { status: 502, error: `nothing in this sandbox listens on port ${port}` };
      if (!processTree(this.root).some((pid) => holdsSocket(pid, inodes))) {
        return { status: 403, error: `port ${port} is not a port of this sandbox: only programs the sandbox runs can be reached through /proxy` };
      }
    } catch {
      return { status: 403, error: 'this sandbox shares the host network and its ports cannot be told apart from the host\'s here: /proxy is refused' };
    }
    // a burst of requests (a page's assets) checks once a second
    this.allowedUntil.set(port, Date.now() + 1_000);
    if (this.allowedUntil.size > 64) this.allowedUntil.clear();
    return null;
  }
}
