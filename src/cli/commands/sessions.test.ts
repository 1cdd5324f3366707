import { describe, expect, it } from 'vitest';
import { formatEngineEvent, formatSession, formatSessionList, type SessionView } from './sessions.js';

const session: SessionView = {
  id: '0b6c3f52-8d1e-4c55-9b1a-2f0e6f1c9a10', project_id: 'p', status: 'stopped', desired_state: 'stopped', agent: 'coder', model: null,
  base_ref: 'main', base_sha: 'a'.repeat(40), branch: '0b6c3f52-8d1e-4c55-9b1a-2f0e6f1c9a10', trigger: 'nightly', created_by: 'u',
  created_at: '2026-11-23T12:00:00Z', last_activity_at: null, reason: 'Idle', initial_prompt: 'do it', pending_prompts: 1, sandbox_state: 'stopped',
};

describe('svc sessions output', () => {
  it('lists sessions as a table, and says so when there are none', () => {
    expect(formatSessionList([])).toEqual(['No sessions.']);
    const lines = formatSessionList([session]);
    expect(lines[0]).toMatch(/^ID\s+STATUS\s+AGENT/);
    expect(lines.at(-1)).toContain('stopped (Idle)');
    expect(lines.at(-1)).toContain('nightly');
  });

  it('shows one session', () => {
    const text = formatSession(session).join('\n');
    expect(text).toContain('Status:    stopped (Idle), desired stopped');
    expect(text).toContain(`from main at ${'a'.repeat(12)}`);
    expect(text).toContain('1 prompt(s) waiting');
    expect(text).toContain('  do it');
  });

  it.each([
    [{ type: 'server.heartbeat', properties: {} }, null],
    [{ type: 'message.part.updated', properties: { part: { type: 'text', text: 'hello' } } }, 'text: hello'],
    [{ type: 'message.part.updated', properties: { part: { type: 'tool', tool: 'bash', state: { status: 'running', input: { command: 'ls' } } } } }, 'tool bash running {"command":"ls"}'],
    [{ type: 'session.status', properties: { sessionID: 's', status: { type: 'busy' } } }, 'status: "busy"'],
    [{ type: 'server.connected', properties: {} }, 'server.connected'],
  ])('engine event %j', (event, line) => {
    expect(formatEngineEvent(event)).toBe(line);
  });
});
