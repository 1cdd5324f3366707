import { describe, expect, it } from 'vitest';
import { ContainerConfigError, expandVars, parseQuantity, podLimits, resolveProcess, rewriteMountPath, storageLimits, type ResolveInput } from './container.js';

describe('expandVars', () => {
  it('replaces defined $(VAR), keeps unknown ones, and $$ escapes', () => {
    expect(expandVars('$(A)/$(B) $$(A) $', { A: 'x' })).toBe('x/$(B) $(A) $');
  });
});

describe('rewriteMountPath', () => {
  it('maps the mount path and paths below it, the longest mount first', () => {
    const mounts = { '/workspace': '/tmp/p/w', '/workspace/cache': '/tmp/p/c' };
    expect(rewriteMountPath('/workspace', mounts)).toBe('/tmp/p/w');
    expect(rewriteMountPath('/workspace/a/b', mounts)).toBe('/tmp/p/w/a/b');
    expect(rewriteMountPath('/workspace/cache/x', mounts)).toBe('/tmp/p/c/x');
    expect(rewriteMountPath('/workspaces', mounts)).toBe('/workspaces');
  });
});

describe('resolveProcess', () => {
  const base = (container: ResolveInput['container'], sources: Partial<ResolveInput['sources']> = {}): ResolveInput => ({
    pod: { metadata: { name: 'p', namespace: 'ns', uid: 'u', labels: { app: 'a' } } },
    container,
    image: { entrypoint: ['/entry'], cmd: ['default-arg'], env: { PATH: '/bin' } },
    podIP: '127.0.0.9',
    hostIP: '127.0.0.1',
    mounts: {},
    commands: { '/entry': ['node', 'entry.js'] },
    defaultCwd: '/tmp',
    sources: { secret: async () => undefined, configMap: async () => undefined, ...sources },
  });

  it('uses the image entrypoint and CMD, maps the image path to a local command', async () => {
    expect((await resolveProcess(base({ name: 'c' }))).argv).toEqual(['node', 'entry.js', 'default-arg']);
    // command replaces ENTRYPOINT and drops CMD; args replace CMD
    expect((await resolveProcess(base({ name: 'c', command: ['/other'] }))).argv).toEqual(['/other']);
    expect((await resolveProcess(base({ name: 'c', args: ['x'] }))).argv).toEqual(['node', 'entry.js', 'x']);
  });

  it('resolves fieldRefs like a kubelet and refuses what it cannot', async () => {
    const { env } = await resolveProcess(base({ name: 'c', env: [
      { name: 'IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
      { name: 'APP', valueFrom: { fieldRef: { fieldPath: "metadata.labels['app']" } } },
      { name: 'NS', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
    ] }));
    expect(env).toMatchObject({ IP: '127.0.0.9', APP: 'a', NS: 'ns', PATH: '/bin' });
    await expect(resolveProcess(base({ name: 'c', env: [{ name: 'L', valueFrom: { resourceFieldRef: { resource: 'limits.cpu' } } }] })))
      .rejects.toBeInstanceOf(ContainerConfigError);
  });

  it('names a missing key the way a kubelet does; an optional one is skipped', async () => {
    const sources = { secret: async () => ({ a: '1' }) };
    await expect(resolveProcess(base({ name: 'c', env: [{ name: 'X', valueFrom: { secretKeyRef: { name: 's', key: 'b' } } }] }, sources)))
      .rejects.toThrow("couldn't find key b in Secret ns/s");
    const { env } = await resolveProcess(base({ name: 'c', env: [{ name: 'X', valueFrom: { secretKeyRef: { name: 's', key: 'b', optional: true } } }] }, sources));
    expect(env.X).toBeUndefined();
  });
});

describe('pod limits (the size of the pod\'s group on an isolated node)', () => {
  const pod = (...limits: (Record<string, string> | undefined)[]) => ({ spec: { containers: limits.map((l, i) => ({ name: `c${i}`, ...(l ? { resources: { limits: l } } : {}) })) } });

  it.each([['500m', 0.5], ['2', 2], ['1.5', 1.5], ['2048Mi', 2048 * 2 ** 20], ['1Gi', 2 ** 30], ['1G', 1e9], ['128974848', 128974848], ['1e3', 1000], ['100k', 1e5]] as const)('reads %s as %d', (text, value) => {
    expect(parseQuantity(text, 'x')).toBe(value);
  });

  it.each(['', 'lots', '1.5.5', '-1', '1Xi', '1 Gi'])('refuses %j', (text) => {
    expect(() => parseQuantity(text, 'container c limits.memory')).toThrow(ContainerConfigError);
  });

  it('sums the containers\' limits, and leaves a resource unlimited when one container does', () => {
    expect(podLimits(pod({ cpu: '1', memory: '2048Mi' }, { cpu: '500m', memory: '512Mi' }))).toEqual({ cpu: 1.5, memoryBytes: 2560 * 2 ** 20 });
    expect(podLimits(pod({ cpu: '1', memory: '1Gi' }, { memory: '1Gi' }))).toEqual({ cpu: undefined, memoryBytes: 2 ** 31 });
    expect(podLimits(pod(undefined))).toEqual({ cpu: undefined, memoryBytes: undefined });
    expect(() => podLimits(pod({ memory: 'a lot' }))).toThrow(/container c0 limits.memory: "a lot" is not a quantity/);
  });
});

describe('storage limits (what the node evicts a pod past)', () => {
  it('each emptyDir\'s sizeLimit, and the containers\' ephemeral-storage together (as given for one container)', () => {
    const pod = (containers: Record<string, string>[], volumes: Record<string, unknown>[]) => ({ spec: { containers: containers.map((limits, i) => ({ name: `c${i}`, resources: { limits } })), volumes } });
    expect(storageLimits(pod([{ 'ephemeral-storage': '2Mi' }], [{ name: 'workspace', emptyDir: { sizeLimit: '2Mi' } }, { name: 'home', emptyDir: { sizeLimit: '2Gi' } }, { name: 'scratch', emptyDir: {} }]))).toEqual({
      volumes: [{ name: 'workspace', bytes: 2 * 2 ** 20, text: '2Mi' }, { name: 'home', bytes: 2 ** 31, text: '2Gi' }],
      pod: { bytes: 2 * 2 ** 20, text: '2Mi' },
    });
    expect(storageLimits(pod([{ 'ephemeral-storage': '1Mi' }, { 'ephemeral-storage': '1Mi' }], []))).toEqual({ volumes: [], pod: { bytes: 2 * 2 ** 20, text: String(2 * 2 ** 20) } });
    // a container without one leaves the pod unlimited (its volumes' limits still hold)
    expect(storageLimits(pod([{ 'ephemeral-storage': '1Mi' }, {}], []))).toEqual({ volumes: [] });
    expect(() => storageLimits(pod([], [{ name: 'v', emptyDir: { sizeLimit: 'big' } }]))).toThrow(/volume v emptyDir.sizeLimit: "big" is not a quantity/);
  });
});
