import { describe, expect, it } from 'vitest';
import type { BootPhase } from '../../src/resources/index.js';
import type { DaemonHealth } from '../../src/sandbox/index.js';
import { nextTimeline, type TimelineFacts } from './timeline.js';

const NOW = new Date('2026-11-23T12:00:00.300Z');
const t = (ms: number) => new Date(Date.parse('2026-11-23T12:00:00.000Z') + ms).toISOString();

function health(boot: Partial<NonNullable<DaemonHealth['boot']>>, initialPromptSentAt: string | null = null, startedAt = t(500)): DaemonHealth {
  return {
    status: 'ok',
    daemon: { state: 'ready', error: null, started_at: startedAt },
    engine: { state: 'ready', restarts: 0, last_error: null, root_session_id: 'ses_1', initial_prompt_sent_at: initialPromptSentAt, run: null },
    boot: { listening_at: null, clone_started_at: null, clone_ended_at: null, restore_started_at: null, restore_ended_at: null, engine_started_at: null, engine_ready_at: null, ...boot },
    last_activity_at: null,
  };
}

const facts = (over: Partial<TimelineFacts> = {}): TimelineFacts => ({ restart: false, stepTimes: {}, sandboxRequested: false, health: null, delivered: null, ...over });
/** `phase start..end` in ms after 12:00:00 (end `-` while it runs). */
const show = (timeline: BootPhase[] | undefined) => (timeline ?? []).map((p) => `${p.phase} ${Date.parse(p.startedAt) - Date.parse(t(0))}..${p.endedAt ? Date.parse(p.endedAt) - Date.parse(t(0)) : '-'}`);

const booted = health({
  listening_at: t(550), clone_started_at: t(560), clone_ended_at: t(700), restore_started_at: t(700), restore_ended_at: t(750), engine_started_at: t(760), engine_ready_at: t(900),
}, t(950));
const started: BootPhase[] = [
  { phase: 'branch', startedAt: t(0), endedAt: t(100) },
  { phase: 'credentials', startedAt: t(100), endedAt: t(300) },
  { phase: 'sandbox', startedAt: t(300) },
];

describe('the boot timeline', () => {
  it.each<[string, BootPhase[] | undefined, TimelineFacts, string[]]>([
    ['the controller\'s steps and the sandbox asked for', undefined, facts({
      stepTimes: { 'push-branch': { startedAt: t(0), endedAt: t(100) }, 'write-session-secret': { startedAt: t(100), endedAt: t(200) }, 'write-cli-token': { startedAt: t(200), endedAt: t(300) } },
      sandboxRequested: true,
    }), ['branch 0..100', 'credentials 100..300', 'sandbox 300..-']],
    ['the daemon\'s half once it answers, in order', started, facts({ health: booted }),
      ['branch 0..100', 'credentials 100..300', 'sandbox 300..500', 'daemon 500..550', 'clone 560..700', 'restore 700..750', 'engine 760..900', 'prompt 900..950']],
    ['a phase still running has no end', started, facts({ health: health({ listening_at: t(550), clone_started_at: t(560) }) }),
      ['branch 0..100', 'credentials 100..300', 'sandbox 300..500', 'daemon 500..550', 'clone 560..-']],
    ['no restore with checkpoints off; no prompt phase until one was sent', started, facts({ health: health({ listening_at: t(550), clone_started_at: t(560), clone_ended_at: t(700), engine_started_at: t(710), engine_ready_at: t(900) }) }),
      ['branch 0..100', 'credentials 100..300', 'sandbox 300..500', 'daemon 500..550', 'clone 560..700', 'engine 710..900']],
    ['phases are written once: a restarted sandbox\'s daemon changes nothing', [...started.slice(0, 2), { phase: 'sandbox', startedAt: t(300), endedAt: t(500) }, { phase: 'daemon', startedAt: t(500), endedAt: t(550) }],
      facts({ health: health({ listening_at: t(5050) }, null, t(5000)) }), ['branch 0..100', 'credentials 100..300', 'sandbox 300..500', 'daemon 500..550']],
    ['a wake starts over: no branch, the sandbox asked for again', [...started, { phase: 'prompt', startedAt: t(900), endedAt: t(950) }], facts({ restart: true, sandboxRequested: true }), ['sandbox 300..-']],
    ['a wake\'s first prompt is the one the controller delivered; the initial prompt\'s marker of an earlier boot does not count',
      [{ phase: 'sandbox', startedAt: t(300) }],
      facts({ health: health({ listening_at: t(550), engine_started_at: t(600), engine_ready_at: t(900) }, t(-60_000)), delivered: 1, stepTimes: { 'deliver-prompts': { startedAt: t(1000), endedAt: t(1020) } } }),
      ['sandbox 300..500', 'daemon 500..550', 'engine 600..900', 'prompt 900..1020']],
    ['nothing yet', undefined, facts(), []],
  ])('%s', (_name, before, f, expected) => {
    expect(show(nextTimeline(before, f, NOW))).toEqual(expected);
  });

  it('is absent rather than empty', () => {
    expect(nextTimeline(undefined, facts(), NOW)).toBeUndefined();
  });
});
