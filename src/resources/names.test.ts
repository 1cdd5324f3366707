import { describe, expect, it } from 'vitest';
import { changeRequestName, cronFireName, deliveryFireName, isValidName, sandboxName, triggerName } from './names.js';

describe('child names', () => {
  it('names a trigger <project>-<slug> when the slug is name-safe', () => {
    expect(triggerName('web', 'nightly-build')).toBe('web-nightly-build');
  });

  it('gives distinct valid names to slugs that are not name-safe', () => {
    const a = triggerName('web', 'nightly_build');
    const b = triggerName('web', 'nightly-build');
    const c = triggerName('web', 'nightly-');
    for (const n of [a, c]) expect(isValidName(n)).toBe(true);
    expect(new Set([a, b, c]).size).toBe(3);
    expect(a).toMatch(/^web-nightly-build-[0-9a-f]{10}$/);
    expect(triggerName('web', 'nightly_build')).toBe(a);
  });

  it('stays within 253 characters for long parents and slugs', () => {
    const name = triggerName('p'.repeat(200), 's'.repeat(128));
    expect(isValidName(name)).toBe(true);
    expect(name.length).toBeLessThanOrEqual(253);
  });

  it('names sandboxes, fires and change requests deterministically', () => {
    expect(sandboxName('0b7c6f9e-1111-4222-8333-944445555666')).toBe('0b7c6f9e-1111-4222-8333-944445555666');
    expect(cronFireName('web-nightly', new Date('2026-01-01T00:00:00Z'))).toBe('web-nightly-1767225600');
    expect(deliveryFireName('web-hook', 'abc')).toBe(deliveryFireName('web-hook', 'abc'));
    expect(deliveryFireName('web-hook', 'abc')).not.toBe(deliveryFireName('web-hook', 'abd'));
    expect(changeRequestName('web', 3)).toBe('web-3');
  });
});
