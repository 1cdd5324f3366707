import { describe, expect, it } from 'vitest';
import type { Session } from './session.js';
import { logTail, sessionLogSecret, sessionLogText } from './session-log.js';

describe("a failed session's kept log", () => {
  it('keeps the end, from a line start, within the bound (counted in bytes)', () => {
    expect(logTail('short\n', 100)).toBe('short\n');
    const text = Array.from({ length: 100 }, (_, i) => `line ${i}`).join('\n') + '\n';
    const tail = logTail(text, 50);
    expect(Buffer.byteLength(tail)).toBeLessThanOrEqual(50);
    expect(tail.startsWith('line ')).toBe(true);
    expect(tail.endsWith('line 99\n')).toBe(true);
    const wide = 'é'.repeat(40); // 80 bytes: a cut inside a character drops it
    expect(Buffer.byteLength(logTail(wide, 31))).toBeLessThanOrEqual(31);
    expect(logTail(wide, 31)).toMatch(/^é+$/);
  });

  it('lives in a Secret the Session owns, read back as written', () => {
    const session = { apiVersion: 'svc.dev/v1alpha1', kind: 'Session', metadata: { name: 's1', namespace: 'acct', uid: 'u1' } } as Session;
    const secret = sessionLogSecret(session, 'the log\n');
    expect(secret.metadata).toMatchObject({ name: 'svc-session-log-s1', namespace: 'acct', ownerReferences: [{ kind: 'Session', uid: 'u1', controller: true }] });
    expect(sessionLogText(secret)).toBe('the log\n');
    expect(sessionLogText(undefined)).toBeNull();
  });
});
