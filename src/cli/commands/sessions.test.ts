import { describe, expect, it } from 'vitest';
import { textUpTo } from '../api-client.js';
import { formatEngineEvent, formatSession, formatSessionList, formatTimeline, promptQueuedLine, type SessionView } from './sessions.js';

const session: SessionView = {
  id: '0b6c3f52-8d1e-4c55-9b1a-2f0e6f1c9a10', project_id: 'p', status: 'stopped', desired_state: 'stopped', agent: 'coder', model: null,
  base_ref: 'main', base_sha: 'a'.repeat(40), branch: '0b6c3f52-8d1e-4c55-9b1a-2f0e6f1c9a10', trigger: 'nightly', created_by: 'u',
  created_at: '2026-11-23T12:00:00Z', last_activity_at: null, reason: 'Idle', message: 'stopped by the idle sweep; a prompt wakes it on the same branch', model_error: null, progress_error: null,
  initial_prompt: 'do it', pending_prompts: 1, sandbox_state: 'stopped', checkpoint: { sha: 'c'.repeat(40), at: '2026-11-23T12:30:00Z' },
  timeline: [
    { phase: 'branch', started_at: '2026-11-23T12:00:00.000Z', ended_at: '2026-11-23T12:00:00.120Z' },
    { phase: 'credentials', started_at: '2026-11-23T12:00:00.120Z', ended_at: '2026-11-23T12:00:00.160Z' },
    { phase: 'sandbox', started_at: '2026-11-23T12:00:00.160Z', ended_at: '2026-11-23T12:00:00.400Z' },
    { phase: 'engine', started_at: '2026-11-23T12:00:00.500Z', ended_at: '2026-11-23T12:00:01.750Z' },
  ],
};

describe('svc sessions output', () => {
  it('lists sessions as a table, and says so when there are none', () => {
    expect(formatSessionList([])).toEqual(['No sessions.']);
    const lines = formatSessionList([session]);
    expect(lines[0]).toMatch(/^ID\s+STATUS\s+AGENT/);
    expect(lines.at(-1)).toContain('stopped (Idle)');
    expect(lines.at(-1)).toContain('nightly');
    // cut to the newest (--limit): says how many there are
    expect(formatSessionList([session], 1)).toEqual(lines);
    expect(formatSessionList([session], 40).slice(0, -1)).toEqual(lines);
    expect(formatSessionList([session], 40).at(-1)).toBe('(the newest 1 of 40; a larger --limit lists more)');
  });

  it('shows one session', () => {
    const text = formatSession(session).join('\n');
    expect(text).toContain('Status:    stopped (Idle), desired stopped');
    expect(text).toContain(`from main at ${'a'.repeat(12)}`);
    expect(text).toContain('1 prompt(s) waiting');
    expect(text).toContain('  do it');
    expect(text).toContain('Message:   stopped by the idle sweep; a prompt wakes it on the same branch');
    expect(text).toContain(`Checkpoint: ${'c'.repeat(12)} at 2026-11-23T12:30:00Z`);
  });

  it('says who made it: a person, a trigger, or a person firing a trigger', () => {
    const created = (s: Partial<SessionView>) => formatSession({ ...session, ...s }).find((l) => l.startsWith('Created:'));
    expect(created({ trigger: null, created_by: 'u' })).toBe('Created:   2026-11-23T12:00:00Z by u');
    expect(created({ trigger: 'nightly', created_by: null })).toBe('Created:   2026-11-23T12:00:00Z by trigger nightly');
    expect(created({ trigger: 'nightly', created_by: 'u' })).toBe('Created:   2026-11-23T12:00:00Z by u (trigger nightly)');
  });

  it('says why a failed session failed, and not the message of a running one', () => {
    const failed = formatSession({ ...session, status: 'failed', desired_state: 'running', reason: 'EngineFailed', message: 'the engine could not start: spawn opencode ENOENT' }).join('\n');
    expect(failed).toContain('Status:    failed (EngineFailed)\nMessage:   the engine could not start: spawn opencode ENOENT');
    expect(formatSession({ ...session, status: 'running', reason: null, message: 'the sandbox is active and its engine is ready' }).join('\n')).not.toContain('Message:');
    expect(formatSession({ ...session, checkpoint: null }).join('\n')).toContain('Checkpoint: -');
  });

  it('prints the engine\'s model error of a running session, not a bare status', () => {
    const error = 'cannot reach the model: Cannot connect to API: ECONNREFUSED (attempt 3)';
    const text = formatSession({ ...session, status: 'running', reason: null, message: 'the sandbox is active and its engine is ready', model_error: error }).join('\n');
    expect(text).toContain(`Status:    running, desired stopped\nModel:     ${error}`);
    expect(formatSession(session).join('\n')).not.toContain('Model:');
  });

  it('prints why the engine makes no progress (the initial prompt it has not taken, a stall)', () => {
    const why = 'the initial prompt was not delivered: engine refused the initial prompt (500); svc-agent tries again';
    const text = formatSession({ ...session, status: 'running', reason: null, progress_error: why }).join('\n');
    expect(text).toContain(`Engine:    ${why}`);
    expect(formatSession(session).join('\n')).not.toContain('Engine:');
  });

  it('draws the boot timeline: one line per phase with its duration', () => {
    expect(formatTimeline(session.timeline)).toEqual([
      'Start:     took 1.75 s (from 2026-11-23T12:00:00.000Z)',
      '  branch pushed            120 ms  at +0 ms',
      '  credentials written       40 ms  at +120 ms',
      '  sandbox scheduled        240 ms  at +160 ms',
      '  engine ready             1.25 s  at +500 ms',
    ]);
    expect(formatTimeline([{ phase: 'sandbox', started_at: '2026-11-23T12:00:00.000Z', ended_at: null }])).toEqual([
      'Start:     in progress (from 2026-11-23T12:00:00.000Z)',
      '  sandbox scheduled     running  at +0 ms',
    ]);
    expect(formatTimeline([{ phase: 'engine', started_at: '2026-11-23T12:00:00.000Z', ended_at: null }], false)).toEqual([
      'Start:     did not finish (from 2026-11-23T12:00:00.000Z)',
      '  engine ready      no end  at +0 ms',
    ]);
    expect(formatTimeline([])).toEqual([]);
    // the phases overlap: the credentials are written while the branch is pushed, so the start
    // began with the earliest phase, not with the first listed (svc dev: branch at +61 ms)
    expect(formatTimeline([
      { phase: 'branch', started_at: '2026-11-23T12:00:00.061Z', ended_at: '2026-11-23T12:00:00.474Z' },
      { phase: 'credentials', started_at: '2026-11-23T12:00:00.000Z', ended_at: '2026-11-23T12:00:00.022Z' },
    ])[0]).toBe('Start:     took 474 ms (from 2026-11-23T12:00:00.000Z)');
  });

  it.each([
    [{ type: 'server.heartbeat', properties: {} }, null],
    [{ type: 'message.part.updated', properties: { part: { type: 'text', text: 'hello' } } }, 'text: hello'],
    [{ type: 'message.part.updated', properties: { part: { type: 'tool', tool: 'bash', state: { status: 'running', input: { command: 'ls' } } } } }, 'tool bash running {"command":"ls"}'],
    [{ type: 'session.status', properties: { sessionID: 's', status: { type: 'busy' } } }, 'status: "busy"'],
    [{ type: 'server.connected', properties: {} }, 'server.connected'],
    [{ type: 'session.status', properties: { sessionID: 's', status: { type: 'retry', attempt: 3, message: 'Cannot connect to API: ECONNREFUSED', next: 1 } } }, 'status: "retry": cannot reach the model: Cannot connect to API: ECONNREFUSED (attempt 3)'],
    [{ type: 'session.error', properties: { sessionID: 's', error: { name: 'UnknownError', data: { message: 'Model not found: nosuch/x.' } } } }, 'error: Model not found: nosuch/x.'],
    [{ type: 'session.error', properties: { sessionID: 's', error: { name: 'APIError', data: { message: 'Unauthorized\n  at x' } } } }, 'error: APIError: Unauthorized'],
  ])('engine event %j', (event, line) => {
    expect(formatEngineEvent(event)).toBe(line);
  });
});

describe('svc sessions prompt says what becomes of the prompt', () => {
  const id = '6b0d3a8e-1d4e-4b0e-9f57-3f2d2a1c9e10';
  it.each<[SessionView['status'], string]>([
    ['running', `Prompt queued for session ${id} (running); its engine gets it next (svc sessions logs ${id} follows it).`],
    ['stopped', `Prompt queued for session ${id} (stopped); the session is woken to take it.`],
    ['provisioning', `Prompt queued for session ${id} (provisioning); it is delivered once the session runs.`],
  ])('%s', (status, line) => {
    expect(promptQueuedLine({ id, status })).toBe(line);
  });
});

describe('textUpTo', () => {
  it('reads the first bytes of an endless answer (relayed from a sandbox) and stops', async () => {
    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>({ pull(controller) { pulled++; controller.enqueue(new Uint8Array(16 * 1024).fill(0x61)); } });
    const text = await textUpTo(new Response(endless, { status: 500 }), 64 * 1024);
    expect(text).toBe('a'.repeat(64 * 1024));
    expect(pulled).toBeLessThan(10);
    expect(await textUpTo(new Response('{"error":"no"}', { status: 502 }), 64 * 1024)).toBe('{"error":"no"}');
  });
});
