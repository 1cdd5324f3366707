import { describe, expect, it } from 'vitest';
import { innerCommand, jailCommand, outerArgs, type BwrapSpec } from './bwrap.js';
import { AddressPlan, firewallRules } from './net.js';

const spec: BwrapSpec = {
  netnsPath: '/run/netns/svcj-7', hostUid: 1_900_000_007, hostGid: 1_900_000_000, uid: 1000, gid: 1000,
  toolchain: ['/srv/svc/dist'], volumes: [{ source: '/data/.svc-dev/sandboxes/default/s1/workspace', target: '/workspace', writable: true }, { source: '/cache', target: '/cache' }],
  cwd: '/workspace', argv: ['node', '/srv/svc/bin/svc-agent.js'], maxPids: 4096,
};

describe('the jail command', () => {
  it('keeps host paths off every command line the sandbox can read: they go to the outer bwrap on fd 3', () => {
    const { argv, fd3 } = jailCommand(spec);
    expect(argv.slice(0, 7)).toEqual(['nsenter', '--net=/run/netns/svcj-7', '--', 'bwrap', '--args', '3', '--']);
    expect(argv.join(' ')).not.toContain('.svc-dev');
    const options = fd3.toString().split('\0').filter(Boolean);
    expect(options).toEqual(outerArgs(spec));
    expect(options.join(' ')).toContain('--bind /data/.svc-dev/sandboxes/default/s1/workspace /workspace');
    expect(options.join(' ')).toContain('--ro-bind /cache /cache');
    expect(options.join(' ')).toContain('--ro-bind /srv/svc/dist /srv/svc/dist');
    expect(options.join(' ')).toContain('--ro-bind /etc /etc');
  });

  it('drops to the sandbox uid with no capabilities, then shows the pod uid in a user namespace that cannot make more', () => {
    const inner = innerCommand(spec);
    expect(inner).toEqual(expect.arrayContaining(['setpriv', '--reuid=1900000007', '--regid=1900000000', '--clear-groups', '--no-new-privs', '--bounding-set=-all']));
    expect(inner.slice(inner.indexOf('bwrap'))).toEqual(expect.arrayContaining(['--unshare-user', '--uid', '1000', '--gid', '1000', '--disable-userns', '--new-session']));
    expect(inner.slice(-2)).toEqual(['node', '/srv/svc/bin/svc-agent.js']);
    expect(() => innerCommand({ ...spec, hostUid: 0 })).toThrow(/never runs as uid or gid 0/);
  });

  it('bounds the tasks of the sandbox uid before dropping to it (root sets the limit; the sandbox cannot raise it)', () => {
    const inner = innerCommand(spec);
    expect(inner.slice(0, 4)).toEqual(['prlimit', '--nproc=4096', '--', 'setpriv']);
    expect(() => innerCommand({ ...spec, maxPids: 0 })).toThrow(/task limit/);
  });

  it('makes the parents of the toolchain and volumes enterable (755) and /tmp private', () => {
    const options = outerArgs({ ...spec, readOnlyTmp: true }).join(' ');
    expect(options).toContain('--perms 0755 --dir /srv --perms 0755 --dir /srv/svc');
    expect(options).toContain('--perms 1777 --tmpfs /tmp');
    expect(options).toContain('--unshare-pid');
  });

  it('makes /tmp read-only only after what is shown below it (its parents are made there first), unless a volume is /tmp', () => {
    const below = { ...spec, readOnlyTmp: true, toolchain: ['/tmp/checkout/svc/dist'] };
    const options = outerArgs(below);
    expect(options.slice(-2)).toEqual(['--remount-ro', '/tmp']);
    expect(options.indexOf('/tmp/checkout')).toBeLessThan(options.lastIndexOf('--remount-ro'));
    expect(outerArgs({ ...below, volumes: [{ source: '/data/tmp', target: '/tmp', writable: true }] })).not.toContain('--remount-ro');
    expect(outerArgs(spec)).not.toContain('--remount-ro');
  });
});

describe('sandbox addresses and firewall', () => {
  it('gives each slot its address and the subnet one gateway', () => {
    const plan = new AddressPlan('10.213.0.0/16');
    expect(plan.gateway).toBe('10.213.255.254');
    expect(plan.address(1)).toBe('10.213.0.1');
    expect(plan.address(300)).toBe('10.213.1.44');
    expect(() => plan.address(0)).toThrow();
    expect(new AddressPlan('192.168.77.0/24').gateway).toBe('192.168.77.254');
    expect(() => new AddressPlan('10.0.0.0/33')).toThrow(/SVC_SANDBOX_SUBNET/);
  });

  it('lets out only the gateway API ports and in only the sandbox ports', () => {
    const rules = firewallRules('10.213.255.254', [8080, 8080], [8000]);
    expect(rules).toContain('policy drop;');
    expect(rules).toContain('ip daddr 10.213.255.254 tcp dport { 8080 } accept');
    expect(rules).toContain('tcp dport { 8000 } accept');
    expect(firewallRules('10.213.255.254', [], [])).not.toContain('dport');
  });
});
