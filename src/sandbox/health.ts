// The daemon's health, the same for every provider: the schema and its reader live in
// src/lib/daemon-health.ts (shared with svc-agent, which writes it).
import { readDaemonHealth, type DaemonHealth } from '../lib/daemon-health.js';
import type { Sandbox } from '../resources/index.js';

export {
  DaemonHealthSchema, engineBusy, readDaemonHealth, type DaemonCheckpoint, type DaemonHealth, type DaemonProgress,
} from '../lib/daemon-health.js';

/**
 * What a health read of `sandbox` stands for: the Sandbox as a reconcile saw it (its uid and
 * resourceVersion). Whatever changed the Sandbox since (a daemon's state event, which the API
 * writes as an annotation when anything the controllers act on changed in the daemon; a status
 * written by its controller) makes a new version: the reconcile it wakes reads the daemon anew.
 */
export function healthVersion(sandbox: Pick<Sandbox, 'metadata'>): string {
  return `${sandbox.metadata.uid ?? ''} ${sandbox.metadata.resourceVersion ?? ''}`;
}

/** How long a read of one version is shared (from when it was sent). */
export const SHARED_HEALTH_MAX_AGE_MS = 1000;

/**
 * Health reads shared by the Sandbox and Session controllers of one operator. A start woke them
 * about ten times within a few tens of milliseconds, and each reconcile read the daemon's health
 * anew: a connection into the sandbox, svc-agent's answer (which asks its engine) and the parse,
 * about 2 ms of CPU each. A read of the same address and version sent less than `maxAgeMs` ago
 * (or still in flight) is shared: both controllers woken by one change of the Sandbox, or a
 * Session woken again by its own spec or annotations, read once. A reconcile woken by a change of
 * the Sandbox always reads anew, as before: a daemon's event or the Sandbox turning `active`
 * comes with what the daemon did meanwhile (the initial prompt taken, which a stop right after
 * must not lose: the wake would give it again).
 */
export class SharedHealthReads {
  private readonly reads = new Map<string, { version: string; sentAt: number; health: Promise<DaemonHealth | null> }>();

  constructor(
    private readonly maxAgeMs = SHARED_HEALTH_MAX_AGE_MS,
    private readonly readHealth: (address: string) => Promise<DaemonHealth | null> = readDaemonHealth,
    private readonly now: () => number = Date.now,
  ) {}

  /** The health at `address` for `version`; `fresh` sends a read whatever is shared (a daemon just started). */
  read(address: string, version: string, options: { fresh?: boolean } = {}): Promise<DaemonHealth | null> {
    const now = this.now();
    const shared = this.reads.get(address);
    if (!options.fresh && shared && shared.version === version && now - shared.sentAt < this.maxAgeMs) return shared.health;
    const health = this.readHealth(address);
    this.reads.set(address, { version, sentAt: now, health });
    // bounded: an entry lives as long as it can be shared
    const expire = setTimeout(() => {
      if (this.reads.get(address)?.health === health) this.reads.delete(address);
    }, this.maxAgeMs);
    expire.unref();
    return health;
  }

  /** How many reads are kept to be shared. */
  get size(): number {
    return this.reads.size;
  }
}
