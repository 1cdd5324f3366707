import { describe, expect, it } from 'vitest';
import { isolationLines } from './isolation-check.js';

describe('isolationLines', () => {
  it('says each missing piece on a line of its own, then what happens to sessions', () => {
    const problems = ['bwrap is missing: install it with `apt-get install bubblewrap`', 'nft is missing: install it with `apt-get install nftables`'];
    expect(isolationLines({ mode: 'unavailable', message: problems.join('; '), problems })).toEqual([
      'svc dev: ERROR: sandboxes cannot be isolated on this machine: bwrap is missing: install it with `apt-get install bubblewrap`.',
      'svc dev: ERROR: sandboxes cannot be isolated on this machine: nft is missing: install it with `apt-get install nftables`.',
      'svc dev: sessions will refuse to start until this is fixed (or start svc dev with --unsafe-no-isolation, which is unsafe).',
    ]);
  });

  it('names the gateway address and the limits when sandboxes are isolated, and warns when they are not', () => {
    const lines = isolationLines({ mode: 'jail', gateway: '10.213.255.254', limits: 'at most 4096 tasks each; CPU and memory not held (turned off)' });
    expect(lines[0]).toContain('reach the API at 10.213.255.254');
    expect(lines[1]).toBe('svc dev: sandboxes have at most 4096 tasks each; CPU and memory not held (turned off)');
    expect(isolationLines({ mode: 'none' }).join('\n')).toContain('NOT isolated');
  });
});
