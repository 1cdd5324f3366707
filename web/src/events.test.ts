import { describe, expect, it } from 'vitest';
import { applyEvent, emptyLog, roleOf, sseDataReader } from './events.js';

describe('sseDataReader', () => {
  it('gives the data of complete events as chunks arrive and keeps the partial one', () => {
    const read = sseDataReader();
    expect(read('data: {"a":1}\n\n: comment\n\ndata: x\ndata: y\n\ndata: {"b"')).toEqual(['{"a":1}', 'x\ny']);
    expect(read(':2}\r\n\r\n')).toEqual(['{"b":2}']);
  });

  it('reads one huge event in time linear in its size, and gives up one past the bound', () => {
    // a sandbox's 32 MiB event took 36 s when the whole buffer was split again on every chunk
    const read = sseDataReader();
    const chunk = 'x'.repeat(64 * 1024);
    expect(read('data: ')).toEqual([]);
    for (let i = 0; i < 512; i++) expect(read(chunk)).toEqual([]); // 32 MiB: past the 16 MiB an event may keep
    expect(read('\n\ndata: next\n\n')).toEqual(['next']);
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
