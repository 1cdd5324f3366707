// A sandbox's network: its own network namespace, joined to the host by a veth pair, that can
// reach exactly one thing on the host (the API, at the gateway address) and be reached on its
// own ports only (the daemon's 8000).
//
//   host                                         sandbox netns svcj-N
//   lo: 127.0.0.1 (cluster, metrics, ...)        lo: 127.0.0.1 (its engine, its own ports)
//   lo: G/32 (the gateway: the API listens here)
//   svcjN (no address) --- veth --------------- eth0: A/32, route G/32 dev eth0
//   route A/32 dev svcjN src G; forwarding off on svcjN
//
// The host's 127.0.0.1 is not reachable from the namespace (a 127/8 destination leaves no
// other interface), the sandbox has a route to G only (no default route: no internet, no other
// host address), the host does not forward what arrives on svcjN (no other sandbox), and an
// nftables ruleset inside the namespace, which the sandbox cannot change (it holds no capability
// over a namespace root made), allows out only G's API ports and in only the sandbox's own
// ports. Nothing is global but G on lo (shared by every svc on the machine, never removed).
//
// Slots are allocated across processes by exclusive creation of RUN_DIR/slots/N.json (the lock),
// so several svc dev instances and test runs share one machine safely; the record names its owner
// (the provider's data directory) and key (the sandbox), so a restarted owner removes its own
// leftovers and anyone removes those of an owner whose directory is gone.
import { execFile } from 'node:child_process';
import { existsSync, statSync, type Stats } from 'node:fs';
import { mkdir, open, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { writeJsonReplacing } from '../write-json.js';

export const RUN_DIR = '/run/svc-jail';
/** Default address range of sandboxes; override with SVC_SANDBOX_SUBNET (a /16). */
export const DEFAULT_SUBNET = '10.213.0.0/16';
/** Host uids of sandboxes are SANDBOX_UID_BASE + slot; their shared host gid is SANDBOX_UID_BASE. */
export const SANDBOX_UID_BASE = 1_900_000_000;
const MAX_SLOT = 65_000;

export interface SlotRecord {
  index: number;
  /** Absolute path of the directory of the provider that made it (its data directory). */
  owner: string;
  /** The sandbox within the owner (namespace/name, a pod uid). */
  key: string;
  createdAt: string;
}

export interface JailSlot extends SlotRecord {
  netns: string;
  netnsPath: string;
  hostVeth: string;
  /** The sandbox's address: the daemon listens here, the operator and the API connect to it. */
  address: string;
  hostUid: number;
  hostGid: number;
}

/**
 * A slot's network, made by one process: `$1` the host's side (an `ip -batch`), then in the
 * namespace at `$2` its own side (`$3`, another batch) and its firewall (stdin, for nft).
 */
const BUILD_SCRIPT = 'printf "%s" "$1" | ip -batch -; nsenter --net="$2" -- sh -ec \'printf "%s" "$1" | ip -batch -; nft -f -\' svc-jail "$3"';

/** Where `ip netns` keeps its named namespaces. */
const NETNS_DIR = '/run/netns';

export class CommandError extends Error {}

/** Runs a command; rejects with its stderr, after `shown` (the command line unless given). */
export function run(command: string, args: readonly string[], input?: string, shown = `${command} ${args.join(' ')}`): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(command, args, { encoding: 'utf8', maxBuffer: 1 << 20 }, (error, stdout, stderr) => {
      if (error) reject(new CommandError(`${shown}: ${(stderr || error.message).trim()}`));
      else resolve(stdout);
    });
    child.stdin?.on('error', () => undefined); // a command that reads nothing
    child.stdin?.end(input ?? '');
  });
}

/** [base address as a number, prefix length] of a CIDR. */
function parseSubnet(subnet: string): [number, number] {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)\/(\d+)$/.exec(subnet.trim());
  const octets = m ? m.slice(1, 5).map(Number) : [];
  const prefix = m ? Number(m[5]) : NaN;
  if (!m || octets.some((o) => o > 255) || !(prefix >= 8 && prefix <= 24)) throw new Error(`SVC_SANDBOX_SUBNET must be an IPv4 range from /8 to /24, e.g. ${DEFAULT_SUBNET}; got ${JSON.stringify(subnet)}`);
  const base = ((octets[0]! << 24) >>> 0) + (octets[1]! << 16) + (octets[2]! << 8) + octets[3]!;
  const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
  return [(base & mask) >>> 0, prefix];
}

const dotted = (n: number) => [24, 16, 8, 0].map((s) => (n >>> s) & 255).join('.');

/** Addresses of a subnet: the gateway (its last usable address) and slot N's (base + N). */
export class AddressPlan {
  readonly gateway: string;
  readonly slots: number;
  /** The subnet, normalized (base/prefix). */
  readonly subnet: string;
  private readonly base: number;

  constructor(subnet = DEFAULT_SUBNET) {
    const [base, prefix] = parseSubnet(subnet);
    this.base = base;
    this.subnet = `${dotted(base)}/${prefix}`;
    const size = 2 ** (32 - prefix);
    this.gateway = dotted(base + size - 2);
    this.slots = Math.min(MAX_SLOT, size - 3); // .0, the gateway and the broadcast address are not slots
  }

  address(index: number): string {
    if (!(index >= 1 && index <= this.slots)) throw new Error(`slot ${index} is outside 1..${this.slots}`);
    return dotted(this.base + index);
  }
}

export const netnsName = (index: number) => `svcj-${index}`;
export const vethName = (index: number) => `svcj${index}`;

function slotOf(record: SlotRecord, plan: AddressPlan): JailSlot {
  return {
    ...record,
    netns: netnsName(record.index),
    netnsPath: path.join(NETNS_DIR, netnsName(record.index)),
    hostVeth: vethName(record.index),
    address: plan.address(record.index),
    hostUid: SANDBOX_UID_BASE + record.index,
    hostGid: SANDBOX_UID_BASE,
  };
}

/** The nftables ruleset inside a sandbox's namespace. */
export function firewallRules(gateway: string, apiPorts: readonly number[], inboundPorts: readonly number[]): string {
  const set = (ports: readonly number[]) => `{ ${[...new Set(ports)].join(', ')} }`;
  return [
    'table inet svc_sandbox {',
    '  chain input {',
    '    type filter hook input priority 0; policy drop;',
    '    iifname "lo" accept',
    '    ct state established,related accept',
    ...(inboundPorts.length ? [`    tcp dport ${set(inboundPorts)} accept`] : []),
    '  }',
    '  chain output {',
    '    type filter hook output priority 0; policy drop;',
    '    oifname "lo" accept',
    '    ct state established,related accept',
    ...(apiPorts.length ? [`    ip daddr ${gateway} tcp dport ${set(apiPorts)} accept`] : []),
    '  }',
    '}',
    '',
  ].join('\n');
}

export interface NetworkOptions {
  plan: AddressPlan;
  /** Ports of the gateway a sandbox may reach (the API's). */
  apiPorts: readonly number[];
  runDir?: string;
}

export class SandboxNetworks {
  private readonly slotDir: string;
  private gatewayMade?: Promise<void>;

  constructor(private readonly options: NetworkOptions) {
    this.slotDir = path.join(options.runDir ?? RUN_DIR, 'slots');
  }

  get gateway(): string {
    return this.options.plan.gateway;
  }

  /**
   * Once per machine (idempotent): G on lo, and the subnet unreachable except through a
   * sandbox's own /32 route, so that nothing meant for a sandbox that is gone (a health check, a
   * late request) leaves this machine through its default route.
   */
  async ensureGateway(): Promise<void> {
    const shown = await run('ip', ['-4', '-o', 'addr', 'show', 'dev', 'lo']);
    if (!shown.includes(` ${this.gateway}/32 `)) {
      await run('ip', ['addr', 'add', `${this.gateway}/32`, 'dev', 'lo']).catch((error: Error) => {
        if (!/File exists/.test(error.message)) throw error;
      });
    }
    await run('ip', ['route', 'replace', 'unreachable', this.options.plan.subnet]);
  }

  private recordPath(index: number): string {
    return path.join(this.slotDir, `${index}.json`);
  }

  /** A free slot, its network made: namespace, veth, addresses, routes, firewall. */
  async allocate(owner: string, key: string, inboundPorts: readonly number[]): Promise<JailSlot> {
    // G must be on lo before a route names it as its source (once per process; again after a failure)
    await (this.gatewayMade ??= this.ensureGateway().catch((error: unknown) => { this.gatewayMade = undefined; throw error; }));
    await mkdir(this.slotDir, { recursive: true, mode: 0o700 });
    const { plan } = this.options;
    // start at a random slot: concurrent allocators rarely race for the same one
    const start = 1 + Math.floor(Math.random() * plan.slots);
    for (let i = 0; i < plan.slots; i++) {
      const index = 1 + ((start - 1 + i) % plan.slots);
      const record: SlotRecord = { index, owner, key, createdAt: new Date().toISOString() };
      let file;
      try {
        file = await open(this.recordPath(index), 'wx', 0o600); // the lock: exclusive creation
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') continue;
        throw error;
      }
      try {
        await file.writeFile(JSON.stringify(record));
      } finally {
        await file.close();
      }
      const slot = slotOf(record, plan);
      try {
        await this.build(slot, inboundPorts);
      } catch (error) {
        await this.release(slot).catch(() => undefined);
        throw error;
      }
      return slot;
    }
    throw new Error(`no free sandbox network slot (${plan.slots} in use)`);
  }

  private async build(slot: JailSlot, inboundPorts: readonly number[]): Promise<void> {
    // leftovers of a crash under the same name go first
    await this.teardown(slot);
    const host = [
      `netns add ${slot.netns}`,
      `link add ${slot.hostVeth} type veth peer name eth0 netns ${slot.netns}`,
      `link set ${slot.hostVeth} up`,
      // replies go to G: the host's own choice of source address may be one the sandbox has no
      // route to (another range's gateway on lo, the host's own address)
      `route add ${slot.address}/32 dev ${slot.hostVeth} src ${this.gateway}`,
      '',
    ].join('\n');
    const inside = [
      'link set lo up',
      `addr add ${slot.address}/32 dev eth0`,
      'link set eth0 up',
      `route add ${this.gateway}/32 dev eth0`,
      '',
    ].join('\n');
    // One process (there were four, then two): every fork of a large process (the operator) costs
    // it about 5 ms of CPU. The host's side, then inside the namespace its addresses (argv: nothing
    // secret) and its firewall (stdin). Nothing runs in the namespace before the sandbox does.
    await run('sh', ['-ec', BUILD_SCRIPT, 'svc-jail', host, slot.netnsPath, inside], firewallRules(this.gateway, this.options.apiPorts, inboundPorts),
      `ip and nft making the network of ${slot.netns}`);
    // what arrives from a sandbox is for this host (the gateway) or dropped, never forwarded
    await writeFile(`/proc/sys/net/ipv4/conf/${slot.hostVeth}/forwarding`, '0');
    await writeFile(`/proc/sys/net/ipv6/conf/${slot.hostVeth}/disable_ipv6`, '1').catch(() => undefined);
  }

  /** Names the sandbox that holds `slot` now (a slot made ahead, then given): its record says so. */
  async rename(slot: JailSlot, key: string): Promise<JailSlot> {
    const record: SlotRecord = { index: slot.index, owner: slot.owner, key, createdAt: slot.createdAt };
    const file = this.recordPath(slot.index);
    // replaced whole (the record stays there throughout: it is the slot's lock)
    await writeJsonReplacing(file, record);
    return { ...slot, key };
  }

  /** Kills every process in the slot's namespace, removes the network and then the record. */
  /** Whether slot `index` has a record (someone holds it). */
  held(index: number): boolean {
    return existsSync(this.recordPath(index));
  }

  async release(slot: Pick<JailSlot, 'index'>): Promise<void> {
    await this.teardown(slotOf({ index: slot.index, owner: '', key: '', createdAt: '' }, this.options.plan));
    await rm(this.recordPath(slot.index), { force: true });
  }

  private async teardown(slot: JailSlot): Promise<void> {
    if (existsSync(slot.netnsPath)) {
      // killed and gone: a process still exiting holds the namespace (and its mounts)
      for (let attempt = 0; attempt < 60; attempt++) {
        const pids = await netnsPids(slot.netns);
        if (pids.length === 0) break;
        for (const pid of pids) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
        await sleep(50);
      }
    }
    // one process for both when nothing fails (the veth first: its name is free at once, while a
    // namespace is destroyed in the background), then the namespace again until it is gone
    const remove = [
      ...(existsSync(`/sys/class/net/${slot.hostVeth}`) ? [`link del ${slot.hostVeth}`] : []),
      ...(existsSync(slot.netnsPath) ? [`netns del ${slot.netns}`] : []),
    ];
    if (remove.length > 0) await run('ip', ['-force', '-batch', '-'], `${remove.join('\n')}\n`).catch(() => undefined);
    for (let attempt = 0; existsSync(slot.netnsPath); attempt++) {
      try {
        await run('ip', ['netns', 'del', slot.netns]);
      } catch (error) {
        if (attempt >= 5) throw error;
        await sleep(100 * (attempt + 1));
      }
    }
  }

  /** The slot `index` when its record says it belongs to `owner` (a restarted owner finding its sandbox). */
  async find(index: number, owner: string): Promise<JailSlot | undefined> {
    const record = await this.read(index);
    return record && record.owner === owner ? slotOf(record, this.options.plan) : undefined;
  }

  private async read(index: number): Promise<SlotRecord | undefined> {
    try {
      return JSON.parse(await readFile(this.recordPath(index), 'utf8')) as SlotRecord;
    } catch {
      return undefined;
    }
  }

  /**
   * Removes leftovers: the slots of `owner` that `keep` does not claim, and the slots of any
   * owner whose directory is gone (a test run or an svc dev whose data was deleted).
   */
  async sweep(owner: string, keep: (slot: JailSlot) => boolean): Promise<number> {
    let names: string[];
    try { names = await readdir(this.slotDir); } catch { return 0; }
    let removed = 0;
    for (const name of names) {
      const [, digits, tmp] = /^(\d+)\.json(\.tmp)?$/.exec(name) ?? [];
      if (digits === undefined) continue;
      const index = Number(digits);
      const record = tmp ? undefined : await this.read(index);
      if (!record) {
        // what a process killed mid-write left (an empty record, a replacement never renamed):
        // nobody owns it once it is a minute old, and an empty record would hold its slot forever
        if (await olderThanAMinute(path.join(this.slotDir, name))) {
          if (tmp) await rm(path.join(this.slotDir, name), { force: true });
          else await this.release({ index });
          removed++;
        }
        continue;
      }
      const mine = record.owner === owner;
      const orphan = !mine && !existsSync(record.owner) && ageMs(record) > LEFTOVER_AFTER_MS;
      if ((mine && !keep(slotOf(record, this.options.plan))) || orphan) {
        await this.release(record);
        removed++;
      }
    }
    return removed;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A slot nobody owns is left alone this long: its maker may still be writing it. */
const LEFTOVER_AFTER_MS = 60_000;

async function olderThanAMinute(file: string): Promise<boolean> {
  try {
    return Date.now() - (await stat(file)).mtimeMs > LEFTOVER_AFTER_MS;
  } catch {
    return false; // gone meanwhile
  }
}

function ageMs(record: SlotRecord): number {
  const at = Date.parse(record.createdAt);
  return Number.isNaN(at) ? Infinity : Date.now() - at;
}

/**
 * Pids of every process whose network namespace is `netns`: what `ip netns pids` finds, read here
 * (a fork of the operator costs more than the scan).
 */
export async function netnsPids(netns: string): Promise<number[]> {
  let target: Stats;
  try {
    target = await stat(path.join(NETNS_DIR, netns));
  } catch {
    return [];
  }
  const pids = (await readdir('/proc')).filter((entry) => /^\d+$/.test(entry));
  const found: number[] = [];
  await Promise.all(pids.map(async (pid) => {
    try {
      if (sameNamespace(await stat(`/proc/${pid}/ns/net`), target)) found.push(Number(pid));
    } catch { /* gone, or a kernel thread */ }
  }));
  return found;
}

/** Whether two namespace files (a `/proc/<pid>/ns/net`, a bound `/run/netns/<name>`) are one namespace. */
function sameNamespace(a: Stats, b: Stats): boolean {
  return a.ino === b.ino && a.dev === b.dev;
}

/** Whether `pid` runs in the namespace at `netnsPath`. */
export function inNetns(pid: number, netnsPath: string): boolean {
  try {
    return sameNamespace(statSync(`/proc/${pid}/ns/net`), statSync(netnsPath));
  } catch {
    return false;
  }
}
