import { describe, expect, it } from 'vitest';
import { createLogger } from './log.js';

describe('logger', () => {
  it('writes logfmt lines with bound fields, quoting what needs it, and drops debug unless asked', () => {
    const lines: string[] = [];
    const log = createLogger((line) => lines.push(line)).with({ controller: 'project' });
    log.with({ object: 'default/web' }).warn('fetch failed', { error: 'exit 128: "no such repo"', attempt: 2, skipped: undefined });
    log.debug('hidden');
    createLogger((line) => lines.push(line), { debug: true }).debug('shown');
    expect(lines).toEqual([
      'level=warn msg="fetch failed" controller=project object=default/web error="exit 128: \\"no such repo\\"" attempt=2',
      'level=debug msg=shown',
    ]);
  });
});
