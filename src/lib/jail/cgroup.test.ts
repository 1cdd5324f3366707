// The files the sandbox groups write, on a folder laid out as each hierarchy is (the kernel's own
// behaviour is held by test/sandbox/jail.test.ts on this machine's real cgroups).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { detectLayout, GROUP_PARENT, machineCgroups, SandboxCgroups } from './cgroup.js';

const roots: string[] = [];
afterEach(() => { for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true }); });

/** A folder with `files` (relative path: content). */
function tree(files: Record<string, string>): string {
  const root = mkdtempSync(path.join(os.tmpdir(), 'svc-cgroup-test-'));
  roots.push(root);
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), content);
  }
  return root;
}
const read = (root: string, file: string) => readFileSync(path.join(root, file), 'utf8');

describe('sandbox control groups', () => {
  it('says why there are none: no hierarchy, or a v2 one without a controller', () => {
    expect(detectLayout(tree({}))).toEqual({ unavailable: expect.stringMatching(/no cgroup hierarchy .* for cpu, memory, pids/) });
    expect(detectLayout(tree({ 'cgroup.controllers': 'cpu pids' }))).toEqual({ unavailable: expect.stringMatching(/lacks the memory controller/) });
  });

  it('v2: hands the controllers down, then writes cpu.max, memory.max and pids.max of the group; a left-out limit is lifted', async () => {
    const g = `${GROUP_PARENT}/svcj-7`;
    const root = tree({ 'cgroup.controllers': 'cpuset cpu io memory pids', 'cgroup.subtree_control': '', [`${g}/cpu.max`]: '', [`${g}/memory.max`]: '', [`${g}/memory.swap.max`]: '', [`${g}/pids.max`]: '', [`${g}/cgroup.procs`]: '' });
    const cgroups = await machineCgroups(root);
    expect(cgroups).toBeInstanceOf(SandboxCgroups);
    const c = cgroups as SandboxCgroups;
    expect(c.version).toBe(2);
    expect(read(root, 'cgroup.subtree_control')).toBe('+cpu +memory +pids');
    expect(read(root, `${GROUP_PARENT}/cgroup.subtree_control`)).toBe('+cpu +memory +pids');
    expect(read(root, `${GROUP_PARENT}/cpu.weight`)).toBe(String(100 * os.availableParallelism()));
    await c.set('svcj-7', { cpu: 1.5, memoryBytes: 2 ** 30, pids: 4096 });
    expect([read(root, `${g}/cpu.max`), read(root, `${g}/memory.max`), read(root, `${g}/memory.swap.max`), read(root, `${g}/pids.max`)]).toEqual(['150000 100000', String(2 ** 30), '0', '4096']);
    await c.set('svcj-7', { pids: 64 });
    expect([read(root, `${g}/cpu.max`), read(root, `${g}/memory.max`), read(root, `${g}/memory.swap.max`), read(root, `${g}/pids.max`)]).toEqual(['max 100000', 'max', 'max', '64']);
    await c.set('svcj-7', { cpu: 2, pids: 100 }, ['pids']);
    expect([read(root, `${g}/cpu.max`), read(root, `${g}/pids.max`)]).toEqual(['max 100000', '100']);
    await c.enter('svcj-7', 4242);
    expect(read(root, `${g}/cgroup.procs`)).toBe('4242');
  });

  it('v1: one group per controller, CFS quota and memory with swap at the limit', async () => {
    const files: Record<string, string> = {};
    for (const c of ['cpu', 'memory', 'pids']) files[`${c}/cgroup.procs`] = '';
    for (const f of ['cpu/cpu.cfs_period_us', 'cpu/cpu.cfs_quota_us', 'memory/memory.limit_in_bytes', 'memory/memory.memsw.limit_in_bytes', 'pids/pids.max']) {
      const [c, name] = f.split('/') as [string, string];
      files[`${c}/${GROUP_PARENT}/svcj-3/${name}`] = '';
    }
    const root = tree(files);
    const c = (await machineCgroups(root)) as SandboxCgroups;
    expect(c.version).toBe(1);
    expect(read(root, `cpu/${GROUP_PARENT}/cpu.shares`)).toBe(String(1024 * os.availableParallelism()));
    await c.set('svcj-3', { cpu: 0.25, memoryBytes: 64 * 2 ** 20, pids: 256 });
    const dir = (controller: string) => `${controller}/${GROUP_PARENT}/svcj-3`;
    expect(read(root, `${dir('cpu')}/cpu.cfs_quota_us`)).toBe('25000');
    expect(read(root, `${dir('cpu')}/cpu.cfs_period_us`)).toBe('100000');
    expect(read(root, `${dir('memory')}/memory.limit_in_bytes`)).toBe(String(64 * 2 ** 20));
    expect(read(root, `${dir('memory')}/memory.memsw.limit_in_bytes`)).toBe(String(64 * 2 ** 20));
    expect(read(root, `${dir('pids')}/pids.max`)).toBe('256');
    await c.set('svcj-3', {});
    expect([read(root, `${dir('cpu')}/cpu.cfs_quota_us`), read(root, `${dir('memory')}/memory.limit_in_bytes`), read(root, `${dir('pids')}/pids.max`)]).toEqual(['-1', '-1', 'max']);
  });

  it('a hierarchy it may not write is said at once, not at a session\'s start', async () => {
    const root = tree({ 'cgroup.controllers': 'cpu memory pids' });
    writeFileSync(path.join(root, GROUP_PARENT), 'a file where the parent group would be');
    expect(await machineCgroups(root)).toEqual({ unavailable: expect.stringMatching(/^cannot make sandbox groups in cgroup v2 at .*: EEXIST/) });
  });
});
