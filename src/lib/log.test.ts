import { describe, expect, it } from 'vitest';
import { createLogger, logLine, redactText } from './log.js';

describe('structured logs', () => {
  it('writes one JSON object per line with level, component, message and the resource', () => {
    const lines: string[] = [];
    const log = createLogger('operator', { write: (l) => lines.push(l), minLevel: 'info' });
    log.debug('hidden');
    log.info('reconciled', { namespace: 'team', name: 'web' });
    log.error('multi\nline');
    expect(lines).toHaveLength(2);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 'info', component: 'operator', msg: 'reconciled', namespace: 'team', name: 'web' });
    expect(lines[1]).not.toContain('\n');
  });

  it('never writes a secret: secret-named fields, svc tokens, bearer headers, URL credentials', () => {
    const pat = `svc_${'a'.repeat(43)}`;
    const sbx = `svcsbx.11111111-2222-4333-8444-555555555555.${'b'.repeat(43)}`;
    const line = logLine('warn', 'api', `token ${pat} and ${sbx} for https://user:pw@host/repo.git`, {
      password: 'hunter2', headers: { authorization: `Bearer ${pat}` }, nested: { sandboxToken: sbx }, note: `Bearer abc.def`,
    });
    for (const secret of [pat, sbx, 'hunter2', 'user:pw', 'abc.def']) expect(line).not.toContain(secret);
    expect(JSON.parse(line)).toMatchObject({ password: '***', headers: { authorization: '***' }, nested: { sandboxToken: '***' }, note: 'Bearer ***' });
    expect(redactText('plain text')).toBe('plain text');
  });
});
