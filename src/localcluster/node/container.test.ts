import { describe, expect, it } from 'vitest';
import { ContainerConfigError, expandVars, resolveProcess, rewriteMountPath, type ResolveInput } from './container.js';

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
