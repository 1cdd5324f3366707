// The jail every local sandbox runs in (src/lib/jail, issue 20 §1), tried from the inside by a
// probe program: its own uid, PID and mount namespaces, its own folders writable and the
// toolchain read-only, nothing else of the host's files; on the network the API's port at the
// gateway and nothing else (the host's loopback, the gateway's other ports, another sandbox),
// reachable from the host on its own ports only; and everything it made gone after release,
// also after a crash (sweep).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHECK_OWNER, checkIsolation } from '../../src/lib/jail/check.js';
import { Jail, payloadPid, type JailSlot } from '../../src/lib/jail/index.js';
import { netnsPids, RUN_DIR } from '../../src/lib/jail/net.js';

// What the probe checks, from inside the sandbox; prints one JSON object.
const PROBE = `
const fs = require('node:fs');
const net = require('node:net');
const [gateway, apiPort, otherPort, hostPort, neighbour, secretDir, toolchain] = process.argv.slice(2);
const can = (f) => { try { f(); return true; } catch { return false; } };
const connect = (host, port) => new Promise((resolve) => {
  const s = net.connect({ host, port: Number(port), timeout: 1500 });
  s.once('connect', () => { s.destroy(); resolve(true); });
  s.once('timeout', () => { s.destroy(); resolve(false); });
  s.once('error', () => resolve(false));
});
(async () => {
  const out = {
    uid: process.getuid(),
    pids: fs.readdirSync('/proc').filter((e) => /^\\d+$/.test(e)).map(Number),
    seesSecretDir: fs.existsSync(secretDir),
    seesRoot: can(() => fs.readdirSync('/root')),
    writesWorkspace: can(() => fs.writeFileSync('/workspace/written', 'x')),
    writesUsr: can(() => fs.writeFileSync('/usr/.svc-jail-test', 'x')),
    writesToolchain: can(() => fs.writeFileSync(toolchain + '/.svc-jail-test', 'x')),
    readsToolchain: can(() => fs.readdirSync(toolchain)),
    writesTmp: can(() => fs.writeFileSync('/tmp/x', 'x')),
    api: await connect(gateway, apiPort),
    gatewayOtherPort: await connect(gateway, otherPort),
    hostLoopback: await connect('127.0.0.1', hostPort),
    neighbour: await connect(neighbour, 8000),
  };
  require('node:http').createServer((q, r) => r.end('inside')).listen(8000, '0.0.0.0', () => {
    require('node:http').createServer((q, r) => r.end('not exposed')).listen(8001, '0.0.0.0', () => process.stdout.write(JSON.stringify(out) + '\\n'));
  });
})();
`;

let tmp: string;
let owner: string;
let jail: Jail;
let api: http.Server;
let other: http.Server;
let hostOnly: http.Server;
const slots: JailSlot[] = [];

const listen = (server: http.Server, host: string) => new Promise<number>((resolve) => server.listen(0, host, () => resolve((server.address() as AddressInfo).port)));
const answer = (text: string) => http.createServer((_req, res) => res.end(text));

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'svc-jail-test-'));
  owner = path.join(tmp, 'owner');
  mkdirSync(path.join(owner, 'secret'), { recursive: true });
  writeFileSync(path.join(owner, 'secret', 'env'), 'SVC_CLI_TOKEN=admin\n', { mode: 0o600 });
  writeFileSync(path.join(tmp, 'probe.js'), PROBE);
  const probe = new Jail({ apiPorts: [], toolchain: [] });
  await probe.networks.ensureGateway();
  api = answer('api');
  other = answer('other');
  hostOnly = answer('host');
  const apiPort = await listen(api, probe.gateway);
  jail = new Jail({ apiPorts: [apiPort], toolchain: [path.join(tmp, 'probe.js')] });
  await listen(other, '0.0.0.0');
  await listen(hostOnly, '127.0.0.1');
});

afterAll(async () => {
  for (const slot of slots) await jail.release(slot).catch(() => undefined);
  for (const s of [api, other, hostOnly]) s?.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe('the sandbox jail', () => {
  it('is available on this machine (root, bubblewrap, iproute2, nftables, util-linux)', async () => {
    expect(await checkIsolation()).toEqual({ ok: true, problems: [] });
  });

  it("a trial cut off by a kill leaves nothing for long: the next process's check removes its slot and network", async () => {
    // the slot of a check whose process died mid-trial (svc dev killed while it started)
    const dead = execFileSync(process.execPath, ['-p', 'process.pid'], { encoding: 'utf8' }).trim();
    const left = await jail.allocate(CHECK_OWNER, `check-${dead}`, []);
    slots.push(left);
    expect(existsSync(left.netnsPath)).toBe(true);
    // another process checks (this one's result is cached): its own trial's slot goes too
    const report = execFileSync(process.execPath, ['--import', 'tsx', '-e', "import { checkIsolation } from './src/lib/jail/check.ts'; console.log(JSON.stringify(await checkIsolation()));"], { encoding: 'utf8', cwd: path.resolve(import.meta.dirname, '../..') });
    expect(JSON.parse(report)).toEqual({ ok: true, problems: [] });
    expect(existsSync(left.netnsPath)).toBe(false);
    expect(await jail.find(left.index, CHECK_OWNER)).toBeUndefined();
  });

  it('runs as its own non-root uid in its own namespaces, sees only its folders and the toolchain, reaches only the API', async () => {
    const [a, b] = [await jail.allocate(owner, 'a', [8000]), await jail.allocate(owner, 'b', [8000])];
    slots.push(a, b);
    const workspace = path.join(owner, 'a', 'workspace');
    mkdirSync(workspace, { recursive: true });
    const apiPort = (api.address() as AddressInfo).port;
    const args = [jail.gateway, apiPort, (other.address() as AddressInfo).port, (hostOnly.address() as AddressInfo).port, b.address, path.join(owner, 'secret'), path.dirname(process.execPath)].map(String);
    const child = await jail.spawn(a, {
      argv: [process.execPath, path.join(tmp, 'probe.js'), ...args],
      env: { PATH: '/usr/bin:/bin' },
      cwd: '/workspace',
      volumes: [{ source: workspace, target: '/workspace', writable: true }],
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (c: Buffer) => { stdout += c.toString(); });
    child.stderr!.on('data', (c: Buffer) => { stderr += c.toString(); });
    await expect.poll(() => stdout.includes('\n') || child.exitCode !== null, { timeout: 20_000 }).toBe(true);
    expect(stderr).toBe('');
    const seen = JSON.parse(stdout) as Record<string, unknown>;
    expect(seen).toMatchObject({
      uid: 1000, seesSecretDir: false, seesRoot: false,
      writesWorkspace: true, writesUsr: false, writesToolchain: false, readsToolchain: true, writesTmp: true,
      api: true, gatewayOtherPort: false, hostLoopback: false, neighbour: false,
    });
    // its own processes only (the jail's three, the probe): none of the host's, not this test's
    expect((seen.pids as number[]).length).toBeLessThanOrEqual(6);
    expect(seen.pids).not.toContain(process.pid);
    // on the host: its own uid, not root; its file written as that uid
    const payload = payloadPid(child.pid!)!;
    expect(readFileSync(`/proc/${payload}/status`, 'utf8')).toMatch(new RegExp(`^Uid:\\s+${a.hostUid}\\s`, 'm'));
    expect(a.hostUid).toBeGreaterThan(0);
    expect(execFileSync('stat', ['-c', '%u', path.join(workspace, 'written')], { encoding: 'utf8' }).trim()).toBe(String(a.hostUid));
    // the host reaches its own port, not another one
    expect(await (await fetch(`http://${a.address}:8000/`)).text()).toBe('inside');
    await expect(fetch(`http://${a.address}:8001/`, { signal: AbortSignal.timeout(1500) })).rejects.toThrow();
    expect(jail.running(a, child.pid!)).toBe(true);
    expect(jail.running(b, child.pid!)).toBe(false);

    await jail.terminate(a, child.pid!, 2_000);
    expect(child.exitCode !== null || child.signalCode !== null || !existsSync(`/proc/${payload}`)).toBe(true);
  });

  it('terminate sends its SIGTERM to the sandbox\'s program, not to a process it left behind that the PID namespace\'s init adopted', async () => {
    const slot = await jail.allocate(owner, 'term', [8000]);
    slots.push(slot);
    const workspace = path.join(owner, 'term', 'workspace');
    mkdirSync(workspace, { recursive: true });
    // a program whose shell leaves `sleep` running in the background (as an agent's `cmd &` or setsid)
    writeFileSync(path.join(workspace, 'main.js'), `
      process.on('SIGTERM', () => { require('node:fs').writeFileSync('/workspace/signal', 'SIGTERM'); process.exit(0); });
      require('node:child_process').spawn('sh', ['-c', 'sleep 300 &'], { stdio: 'ignore' }).on('exit', () => process.stdout.write('ready\\n'));
      setInterval(() => {}, 1000);
    `);
    const child = await jail.spawn(slot, { argv: [process.execPath, '/workspace/main.js'], env: { PATH: '/usr/bin:/bin' }, cwd: '/workspace', volumes: [{ source: workspace, target: '/workspace', writable: true }], stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout!.on('data', (c: Buffer) => { stdout += c.toString(); });
    await expect.poll(() => stdout, { timeout: 20_000 }).toContain('ready');
    // the orphan sits beside the jail's launchers, higher up than the program
    await expect.poll(() => netnsPids(slot.netns).then((pids) => pids.filter((p) => readFileSync(`/proc/${p}/cmdline`, 'utf8') === 'sleep\u0000300\u0000').length), { timeout: 5_000 }).toBe(1);
    expect(readFileSync(`/proc/${payloadPid(child.pid!)}/cmdline`, 'utf8')).toContain('/workspace/main.js');

    await jail.terminate(slot, child.pid!, 15_000);
    expect(existsSync(path.join(workspace, 'signal')) ? readFileSync(path.join(workspace, 'signal'), 'utf8') : 'killed without a SIGTERM').toBe('SIGTERM');
    await expect.poll(() => netnsPids(slot.netns), { timeout: 5_000 }).toEqual([]);
  }, 30_000);

  it('bounds the processes of a sandbox: a fork loop stops at its task limit, the host forks on, release ends them all', async () => {
    const bounded = new Jail({ apiPorts: [], toolchain: [], maxPids: 64 });
    const slot = await bounded.allocate(owner, 'forks', []);
    slots.push(slot);
    // (an attempt to raise the limit first) 500 background sleeps in a subshell, one line per fork that worked; then the shell waits on
    // its stdin without forking (a fork would fail while the sleeps hold the limit)
    const child = await bounded.spawn(slot, {
      argv: ['/bin/sh', '-c', '(ulimit -u 100000 2>/dev/null && echo raised); (i=0; while [ $i -lt 500 ]; do sleep 300 </dev/null >/dev/null 2>&1 & i=$((i+1)); echo $i; done; echo all); echo stopped; read x'],
      env: { PATH: '/usr/bin:/bin' }, cwd: '/', volumes: [], stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (c: Buffer) => { stdout += c.toString(); });
    child.stderr!.on('data', (c: Buffer) => { stderr += c.toString(); });
    await expect.poll(() => stdout, { timeout: 20_000 }).toContain('stopped');
    expect(stdout).not.toContain('all');
    expect(stdout).not.toContain('raised'); // the hard limit: only root outside may raise it
    expect(stderr).toMatch(/fork/i);
    const forked = Number(stdout.trim().split('\n').at(-2));
    expect(forked).toBeGreaterThan(20);
    expect(forked).toBeLessThan(64);
    const tasks = Number(execFileSync('sh', ['-c', `ps -L -u ${slot.hostUid} --no-headers | wc -l`], { encoding: 'utf8' }).trim());
    expect(tasks).toBeGreaterThan(20);
    expect(tasks).toBeLessThanOrEqual(64);
    expect(execFileSync('sh', ['-c', 'echo host forks'], { encoding: 'utf8' })).toBe('host forks\n');
    await bounded.release(slot);
    await expect.poll(() => execFileSync('sh', ['-c', `ps -L -u ${slot.hostUid} --no-headers | wc -l`], { encoding: 'utf8' }).trim(), { timeout: 5_000 }).toBe('0');
  }, 30_000);

  it('holds a sandbox to its CPU and memory (its own control group): a busy loop gets its share of a core, a memory hog is killed, release removes the group', async () => {
    expect(await jail.limitsLine()).toMatch(/a fair share of the CPU, the memory their template gives \(cgroup v[12]\)/);
    const slot = await jail.allocate(owner, 'limits', []);
    slots.push(slot);
    // a quarter of a core: 1.5 s of wall clock get at most about 0.4 s of CPU
    const busy = await jail.spawn(slot, {
      argv: [process.execPath, '-e', 'const end = Date.now() + 1500; while (Date.now() < end); const u = process.cpuUsage(); console.log((u.user + u.system) / 1000)'],
      env: { PATH: '/usr/bin:/bin' }, cwd: '/', volumes: [], stdio: ['ignore', 'pipe', 'inherit'], limits: { cpu: 0.25, memoryBytes: 256 * 2 ** 20 },
    });
    let out = '';
    busy.stdout!.on('data', (c: Buffer) => { out += c.toString(); });
    await new Promise((resolve) => busy.once('close', resolve));
    expect(Number(out.trim())).toBeGreaterThan(100);
    expect(Number(out.trim())).toBeLessThan(600);
    // 64 MiB: a program that touches 400 MiB is killed by the kernel, the host is not asked for it
    await jail.setLimits(slot, { memoryBytes: 64 * 2 ** 20 });
    const hog = await jail.spawn(slot, {
      argv: [process.execPath, '-e', 'const held = []; for (let i = 0; i < 100; i++) held.push(Buffer.alloc(4 * 2 ** 20, 1)); console.log("survived")'],
      env: { PATH: '/usr/bin:/bin' }, cwd: '/', volumes: [], stdio: ['ignore', 'pipe', 'pipe'],
    });
    let hogOut = '';
    hog.stdout!.on('data', (c: Buffer) => { hogOut += c.toString(); });
    const exit = await new Promise<[number | null, string | null]>((resolve) => hog.once('exit', (code, signal) => resolve([code, signal])));
    expect(hogOut).not.toContain('survived');
    expect(exit).not.toEqual([0, null]);
    const groups = execFileSync('sh', ['-c', `ls -d /sys/fs/cgroup/*/svc-sandboxes/${slot.netns} /sys/fs/cgroup/svc-sandboxes/${slot.netns} 2>/dev/null || true`], { encoding: 'utf8' }).trim();
    expect(groups).not.toBe('');
    await jail.release(slot);
    expect(execFileSync('sh', ['-c', `ls -d /sys/fs/cgroup/*/svc-sandboxes/${slot.netns} /sys/fs/cgroup/svc-sandboxes/${slot.netns} 2>/dev/null || true`], { encoding: 'utf8' }).trim()).toBe('');
  }, 30_000);

  it('shares the CPU by sandbox, not by process: sixteen busy loops in a sandbox get about what the sandboxes\' weight gives (one host loop per core), not sixteen host loops\' time', async () => {
    const slot = await jail.allocate(owner, 'shares', []);
    slots.push(slot);
    const spin = 'while :; do :; done';
    // no CPU limit: its group's share alone holds it
    const busy = await jail.spawn(slot, {
      // each in a session of its own: the kernel's autogroups would give each its own share
      argv: ['/bin/sh', '-c', `for i in $(seq 16); do setsid sh -c '${spin}' & done; wait`], env: { PATH: '/usr/bin:/bin' }, cwd: '/', volumes: [], stdio: ['ignore', 'ignore', 'ignore'], limits: {},
    });
    // in a session of its own: the kernel gives it one share, not a part of this test runner's
    const host = spawn('/bin/sh', ['-c', spin], { stdio: 'ignore', detached: true });
    const ticks = (pid: number) => {
      try {
        const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
        return Number(fields[11]) + Number(fields[12]);
      } catch { return 0; }
    };
    const sandboxTicks = async () => (await netnsPids(slot.netns)).reduce((sum, pid) => sum + ticks(pid), 0);
    try {
      await new Promise((resolve) => setTimeout(resolve, 500));
      const [s0, h0] = [await sandboxTicks(), ticks(host.pid!)];
      await new Promise((resolve) => setTimeout(resolve, 3000));
      const [s1, h1] = [await sandboxTicks(), ticks(host.pid!)];
      // a share per session would give the sandbox sixteen times the host loop's time; the
      // sandboxes' group weighs as many loops as the machine has cores
      expect(h1 - h0).toBeGreaterThan(0);
      expect((s1 - s0) / (h1 - h0)).toBeLessThan(os.availableParallelism() + 2);
    } finally {
      host.kill('SIGKILL');
      await jail.terminate(slot, busy.pid!, 0);
      await jail.release(slot);
    }
  }, 30_000);

  it('a sandbox of another address range (SVC_SANDBOX_SUBNET) is reached from the host, whatever other gateway is on lo', async () => {
    const other = new Jail({ apiPorts: [], toolchain: [], subnet: '10.215.0.0/16' });
    const slot = await other.allocate(owner, 'range', [8000]);
    slots.push(slot);
    try {
      expect(slot.address).toMatch(/^10\.215\./);
      const child = await other.spawn(slot, {
        argv: [process.execPath, '-e', "require('node:http').createServer((q, r) => r.end('in 10.215')).listen(8000, '0.0.0.0')"],
        env: { PATH: '/usr/bin:/bin' }, cwd: '/', volumes: [], stdio: ['ignore', 'ignore', 'inherit'],
      });
      await expect.poll(() => fetch(`http://${slot.address}:8000/`, { signal: AbortSignal.timeout(1_000) }).then((r) => r.text(), () => ''), { timeout: 10_000 }).toBe('in 10.215');
      await other.terminate(slot, child.pid!, 0);
    } finally {
      await other.release(slot);
      for (const args of [['addr', 'del', '10.215.255.254/32', 'dev', 'lo'], ['route', 'del', 'unreachable', '10.215.0.0/16']]) {
        try { execFileSync('ip', args, { stdio: 'ignore' }); } catch { /* not there */ }
      }
    }
  }, 30_000);

  it("release kills every process in the slot's namespace, and only those", async () => {
    const slot = await jail.allocate(owner, 'killed', [8000]);
    slots.push(slot);
    const inside = spawn('nsenter', [`--net=${slot.netnsPath}`, '--', 'sleep', '300'], { stdio: 'ignore' });
    const outside = spawn('sleep', ['300'], { stdio: 'ignore' });
    const ended = (child: ChildProcess) => new Promise<string>((resolve) => child.once('exit', (_code, signal) => resolve(String(signal))));
    const [insideEnded, outsideEnded] = [ended(inside), ended(outside)];
    try {
      await expect.poll(() => netnsPids(slot.netns), { timeout: 5_000 }).toEqual([inside.pid]);
      await jail.release(slot);
      expect(await insideEnded).toBe('SIGKILL');
      expect(outside.exitCode).toBeNull();
    } finally {
      inside.kill('SIGKILL');
      outside.kill('SIGKILL');
      await outsideEnded;
    }
  });

  it('release removes the namespace, the veth and the record; sweep removes the slots a crash left', async () => {
    const slot = await jail.allocate(owner, 'c', [8000]);
    expect(existsSync(slot.netnsPath)).toBe(true);
    expect(existsSync(`/sys/class/net/${slot.hostVeth}`)).toBe(true);
    await jail.release(slot);
    expect(existsSync(slot.netnsPath)).toBe(false);
    expect(existsSync(`/sys/class/net/${slot.hostVeth}`)).toBe(false);
    expect(await jail.find(slot.index, owner)).toBeUndefined();

    // a restarted owner keeps what it still runs and removes the rest
    const kept = await jail.allocate(owner, 'kept', [8000]);
    const left = await jail.allocate(owner, 'left', [8000]);
    slots.push(kept, left);
    expect(await jail.sweep(owner, (s) => s.key === 'kept')).toBeGreaterThanOrEqual(1);
    expect(existsSync(left.netnsPath)).toBe(false);
    expect(existsSync(kept.netnsPath)).toBe(true);
    expect((await jail.find(kept.index, owner))?.key).toBe('kept');
  });

  it('sweep removes what a process killed mid-write left: an empty record (it held its slot forever) and a replacement never renamed, once a minute old', async () => {
    const slotDir = path.join(RUN_DIR, 'slots');
    const free = () => {
      for (;;) {
        const index = 1 + Math.floor(Math.random() * 60_000);
        if (!existsSync(path.join(slotDir, `${index}.json`)) && !existsSync(path.join(slotDir, `${index}.json.tmp`))) return index;
      }
    };
    const aged = (file: string, content = '') => {
      writeFileSync(file, content, { flag: 'wx', mode: 0o600 });
      const past = new Date(Date.now() - 120_000);
      utimesSync(file, past, past);
      return file;
    };
    const empty = aged(path.join(slotDir, `${free()}.json`));
    const garbled = aged(path.join(slotDir, `${free()}.json`), '{"index":');
    const unrenamed = aged(path.join(slotDir, `${free()}.json.tmp`), JSON.stringify({ index: 1, owner, key: 'x', createdAt: new Date().toISOString() }));
    const beingWritten = path.join(slotDir, `${free()}.json`);
    writeFileSync(beingWritten, '', { flag: 'wx', mode: 0o600 }); // a maker that may still write it
    try {
      await jail.sweep(owner, () => true);
      expect([empty, garbled, unrenamed].filter(existsSync)).toEqual([]);
      expect(existsSync(beingWritten)).toBe(true);
    } finally {
      for (const file of [empty, garbled, unrenamed, beingWritten]) rmSync(file, { force: true });
    }
  });

  it('setNiceness reaches every thread of a sandbox, also those made while it changes them (a warm svc-agent kept a thread at nice 19)', async () => {
    // At nice 19: a thousand sleeping threads, then one that starts short-lived threads without
    // end. It comes last in the thread listing, so threads it starts while the others are changed
    // are not in that listing: a single look left them at 19.
    const source = path.join(tmp, 'spawner.cc');
    writeFileSync(source, `
      #include <pthread.h>
      #include <unistd.h>
      static void *sleeper(void *) { for (;;) pause(); return nullptr; }
      static void *brief(void *) { usleep(200000); return nullptr; }
      static void *creator(void *) {
        for (;;) { pthread_t t; if (pthread_create(&t, nullptr, brief, nullptr) == 0) pthread_detach(t); usleep(50); }
        return nullptr;
      }
      int main() {
        pthread_attr_t small; pthread_attr_init(&small); pthread_attr_setstacksize(&small, 65536);
        for (int i = 0; i < 1000; i++) { pthread_t t; pthread_create(&t, &small, sleeper, nullptr); }
        pthread_t c; pthread_create(&c, nullptr, creator, nullptr);
        for (;;) pause();
      }`);
    execFileSync('g++', ['-O1', '-pthread', '-o', path.join(tmp, 'spawner'), source]);
    const spawner = spawn('nice', ['-n', '19', path.join(tmp, 'spawner')], { stdio: 'ignore' });
    try {
      const pid = spawner.pid!;
      const threadNiceness = () => new Set(readdirSync(`/proc/${pid}/task`).flatMap((tid) => {
        try {
          const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
          return [Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])];
        } catch { return []; } // a thread gone meanwhile
      }));
      const deadline = Date.now() + 15_000;
      while (readdirSync(`/proc/${pid}/task`).length < 1050 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(threadNiceness()).toEqual(new Set([19]));
      new Jail({ apiPorts: [], toolchain: [] }).setNiceness(pid, 0);
      expect(threadNiceness()).toEqual(new Set([0]));
    } finally {
      spawner.kill('SIGKILL');
    }
  });
});
