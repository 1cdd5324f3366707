import { describe, expect, it } from 'vitest';
import { applyEvent, emptyLog, roleOf, takeSseData } from './events.js';

describe('takeSseData', () => {
  it('returns complete frames and keeps the partial one', () => {
    const { data, rest } = takeSseData('data: {"a":1}\n\n: comment\n\ndata: x\ndata: y\n\ndata: {"b"');
    expect(data).toEqual(['{"a":1}', 'x\ny']);
    expect(rest).toBe('data: {"b"');
    expect(takeSseData(`${rest}:2}\r\n\r\n`).data).toEqual(['{"b":2}']);
  });
});

describe('applyEvent', () => {
  it('folds text parts (updated in place, then by deltas), tool calls with their command, errors and status', () => {
    const events = [
      { type: 'server.connected', properties: {} },
      { type: 'message.updated', properties: { info: { id: 'm1', role: 'assistant' } } },
      { type: 'message.part.updated', properties: { part: { id: 'p1', messageID: 'm1', type: 'text', text: 'Hel' } } },
      { type: 'message.part.updated', properties: { part: { id: 'p1', messageID: 'm1', type: 'text', text: 'Hello' } } },
      { type: 'message.part.delta', properties: { partID: 'p1', field: 'text', delta: ', <b>world</b>' } },
      { type: 'message.part.updated', properties: { part: { id: 'p2', messageID: 'm1', type: 'tool', tool: 'bash', state: { status: 'completed', input: { command: 'git push origin HEAD' }, output: 'ok' } } } },
      { type: 'session.status', properties: { status: { type: 'busy' } } },
      { type: 'session.error', properties: { error: { name: 'ProviderAuthError', data: { message: 'no key' } } } },
    ];
    const log = events.reduce(applyEvent, emptyLog());
    expect(log.count).toBe(8);
    expect(log.status).toBe('busy');
    expect(log.items.map(({ kind, text, tool, input, output }) => ({ kind, text, tool, input, output }))).toEqual([
      { kind: 'text', text: 'Hello, <b>world</b>', tool: undefined, input: undefined, output: undefined },
      { kind: 'tool', text: '', tool: 'bash', input: 'git push origin HEAD', output: 'ok' },
      { kind: 'error', text: 'ProviderAuthError: no key', tool: undefined, input: undefined, output: undefined },
    ]);
    expect(roleOf(log, log.items[0]!)).toBe('assistant');
  });

  it('ignores events it does not know and malformed ones', () => {
    const log = [null, { type: 'file.edited' }, { type: 'message.part.updated', properties: {} }].reduce(applyEvent, emptyLog());
    expect(log.items).toEqual([]);
    expect(log.count).toBe(3);
  });
});
