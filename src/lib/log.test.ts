import { describe, expect, it } from 'vitest';
import { createLogger, logLine, redactText } from './log.js';

const parse = (line: string) => JSON.parse(line) as Record<string, unknown>;

describe('logger', () => {
  it('writes one JSON object per line with bound fields, and drops debug unless asked', () => {
    const lines: string[] = [];
    const log = createLogger((line) => lines.push(line), { fields: { component: 'operator' } }).with({ controller: 'project' });
    log.with({ object: 'default/web' }).warn('fetch failed', { error: 'exit 128: "no such repo"\nsecond line', attempt: 2, skipped: undefined });
    log.debug('hidden');
    createLogger((line) => lines.push(line), { debug: true }).debug('shown');
    expect(lines).toHaveLength(2);
    expect(lines[0]).not.toContain('\n');
    const { time, ...rest } = parse(lines[0]!);
    expect(typeof time).toBe('string');
    expect(rest).toEqual({ level: 'warn', msg: 'fetch failed', component: 'operator', controller: 'project', object: 'default/web', error: 'exit 128: "no such repo"\nsecond line', attempt: 2 });
    expect(parse(lines[1]!)).toMatchObject({ level: 'debug', msg: 'shown' });
  });

  it('never writes a secret: secret-named fields, svc tokens, bearer headers, URL credentials', () => {
    const pat = `svc_${'a'.repeat(43)}`;
    const sbx = `svcsbx.11111111-2222-4333-8444-555555555555.${'b'.repeat(43)}`;
    const llm = `svcllm.11111111-2222-4333-8444-555555555555.${'c'.repeat(43)}`;
    const line = logLine('warn', `token ${pat} and ${sbx} and ${llm} for https://user:pw@host/repo.git`, {
      password: 'hunter2', sandboxToken: sbx, note: 'Authorization: Bearer abc.def',
    });
    for (const secret of [pat, sbx, llm, 'hunter2', 'user:pw', 'abc.def']) expect(line).not.toContain(secret);
    expect(parse(line)).toMatchObject({ password: '***', sandboxToken: '***', note: 'Authorization: Bearer ***' });
    expect(redactText('plain text')).toBe('plain text');
  });
});
