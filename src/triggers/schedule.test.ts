import { describe, expect, it } from 'vitest';
import { decide, nextCronInstant, zoneOffsetMinutes, type ScheduleSpec } from './schedule.js';
import { cronFireName } from '../resources/names.js';

/** The instants after `from`, n of them, as ISO strings. */
function instants(expression: string, zone: string, from: string, n: number): string[] {
  const out: string[] = [];
  let at = new Date(from);
  for (let i = 0; i < n; i++) { at = nextCronInstant(expression, zone, at); out.push(at.toISOString()); }
  return out;
}

describe('nextCronInstant across DST', () => {
  it.each([
    // America/New_York falls back on 2025-11-02 at 02:00 EDT -> 01:00 EST: 01:30 happens twice, fires once.
    ['fall back: repeated 01:30 fires once', '0 30 1 * * *', 'America/New_York', '2025-11-01T12:00:00Z', ['2025-11-02T05:30:00.000Z', '2025-11-03T06:30:00.000Z']],
    // America/New_York springs forward on 2025-03-09 at 02:00 EST -> 03:00 EDT: 02:30 is skipped, fires at 03:00 EDT.
    ['spring forward: skipped 02:30 fires at the end of the gap', '0 30 2 * * *', 'America/New_York', '2025-03-08T12:00:00Z', ['2025-03-09T07:00:00.000Z', '2025-03-10T06:30:00.000Z']],
    ['spring forward: 03:00 itself fires once', '0 0 3 * * *', 'America/New_York', '2025-03-08T12:00:00Z', ['2025-03-09T07:00:00.000Z', '2025-03-10T07:00:00.000Z']],
    ['spring forward: 01:59:59 is not in the gap', '59 59 1 * * *', 'America/New_York', '2025-03-08T12:00:00Z', ['2025-03-09T06:59:59.000Z', '2025-03-10T05:59:59.000Z']],
    // Europe/Berlin: 2025-03-30 02:00 CET -> 03:00 CEST; 2025-10-26 03:00 CEST -> 02:00 CET.
    ['Berlin spring forward', '0 30 2 * * *', 'Europe/Berlin', '2025-03-29T12:00:00Z', ['2025-03-30T01:00:00.000Z', '2025-03-31T00:30:00.000Z']],
    ['Berlin fall back', '0 30 2 * * *', 'Europe/Berlin', '2025-10-25T12:00:00Z', ['2025-10-26T00:30:00.000Z', '2025-10-27T01:30:00.000Z']],
    // Australia/Lord_Howe shifts by 30 minutes: 2025-10-05 02:00 (+10:30) -> 02:30 (+11:00); 2025-04-06 02:00 (+11:00) -> 01:30 (+10:30).
    ['Lord Howe spring forward: skipped 02:15 fires at 02:30', '0 15 2 * * *', 'Australia/Lord_Howe', '2025-10-04T00:00:00Z', ['2025-10-04T15:30:00.000Z', '2025-10-05T15:15:00.000Z']],
    ['Lord Howe fall back: repeated 01:45 fires once', '0 45 1 * * *', 'Australia/Lord_Howe', '2025-04-05T00:00:00Z', ['2025-04-05T14:45:00.000Z', '2025-04-06T15:15:00.000Z']],
    ['every second in UTC', '*/2 * * * * *', 'UTC', '2030-01-01T00:00:00.500Z', ['2030-01-01T00:00:02.000Z', '2030-01-01T00:00:04.000Z']],
    ['weekdays only', '30 */15 * * * 1-5', 'UTC', '2030-02-01T23:59:00Z', ['2030-02-04T00:00:30.000Z', '2030-02-04T00:15:30.000Z']],
  ])('%s', (_name, expression, zone, from, expected) => {
    expect(instants(expression, zone, from, expected.length)).toEqual(expected);
  });

  it('knows the offsets of the zones it relies on', () => {
    expect(zoneOffsetMinutes('Australia/Lord_Howe', new Date('2025-07-01T00:00:00Z'))).toBe(630);
    expect(zoneOffsetMinutes('Australia/Lord_Howe', new Date('2025-12-01T00:00:00Z'))).toBe(660);
    expect(zoneOffsetMinutes('America/New_York', new Date('2025-07-01T00:00:00Z'))).toBe(-240);
  });
});

const every2s: ScheduleSpec = { type: 'cron', enabled: true, cron: '*/2 * * * * *', timezone: 'UTC' };
const t = (iso: string) => new Date(iso);

describe('decide', () => {
  it.each<[string, ScheduleSpec, { anchor: string; dormant?: boolean; paused?: boolean }, string, { fire: string | null; missed: number; next: string | null }]>([
    ['before the instant: nothing, wake at the instant', every2s, { anchor: '2030-01-01T00:00:00Z' }, '2030-01-01T00:00:01.999Z', { fire: null, missed: 0, next: '2030-01-01T00:00:02.000Z' }],
    ['at the instant: fire it', every2s, { anchor: '2030-01-01T00:00:00Z' }, '2030-01-01T00:00:02.000Z', { fire: '2030-01-01T00:00:02.000Z', missed: 0, next: '2030-01-01T00:00:04.000Z' }],
    ['already handled: nothing', every2s, { anchor: '2030-01-01T00:00:02Z' }, '2030-01-01T00:00:02.400Z', { fire: null, missed: 0, next: '2030-01-01T00:00:04.000Z' }],
    ['down 10 s: only the latest fires, four are missed', every2s, { anchor: '2030-01-01T00:00:00Z' }, '2030-01-01T00:00:10.500Z', { fire: '2030-01-01T00:00:10.000Z', missed: 4, next: '2030-01-01T00:00:12.000Z' }],
    ['down past the window: nothing fires, all missed', { ...every2s, cron: '0 0 * * * *' }, { anchor: '2030-01-01T00:00:00Z' }, '2030-01-01T03:06:00Z', { fire: null, missed: 3, next: '2030-01-01T04:00:00.000Z' }],
    ['within the 5 min window', { ...every2s, cron: '0 0 * * * *' }, { anchor: '2030-01-01T00:00:00Z' }, '2030-01-01T01:04:59Z', { fire: '2030-01-01T01:00:00.000Z', missed: 0, next: '2030-01-01T02:00:00.000Z' }],
    ['disabled', { ...every2s, enabled: false }, { anchor: '2030-01-01T00:00:00Z' }, '2030-01-01T00:00:02Z', { fire: null, missed: 0, next: null }],
    ['paused', every2s, { anchor: '2030-01-01T00:00:00Z', paused: true }, '2030-01-01T00:00:02Z', { fire: null, missed: 0, next: null }],
    ['webhook', { type: 'webhook', enabled: true, timezone: 'UTC' }, { anchor: '2030-01-01T00:00:00Z' }, '2030-01-01T00:00:02Z', { fire: null, missed: 0, next: null }],
    ['run_at ahead', { type: 'cron', enabled: true, runAt: '2030-01-01T01:00:00Z', timezone: 'UTC' }, { anchor: '2030-01-01T00:00:00Z' }, '2030-01-01T00:30:00Z', { fire: null, missed: 0, next: '2030-01-01T01:00:00.000Z' }],
    ['run_at due', { type: 'cron', enabled: true, runAt: '2030-01-01T01:00:00Z', timezone: 'UTC' }, { anchor: '2030-01-01T00:00:00Z' }, '2030-01-01T01:00:00.010Z', { fire: '2030-01-01T01:00:00.000Z', missed: 0, next: null }],
    ['run_at already past when it appears, within the window', { type: 'cron', enabled: true, runAt: '2030-01-01T01:00:00Z', timezone: 'UTC' }, { anchor: '2030-01-01T01:02:00Z' }, '2030-01-01T01:02:00Z', { fire: '2030-01-01T01:00:00.000Z', missed: 0, next: null }],
    ['run_at past the window: missed', { type: 'cron', enabled: true, runAt: '2030-01-01T01:00:00Z', timezone: 'UTC' }, { anchor: '2030-01-01T00:00:00Z' }, '2030-01-01T01:05:01Z', { fire: null, missed: 1, next: null }],
    ['run_at dormant', { type: 'cron', enabled: true, runAt: '2030-01-01T01:00:00Z', timezone: 'UTC' }, { anchor: '2030-01-01T00:00:00Z', dormant: true }, '2030-01-01T01:00:01Z', { fire: null, missed: 0, next: null }],
  ])('%s', (_name, spec, state, now, expected) => {
    const d = decide(spec, { anchor: t(state.anchor), dormant: state.dormant, paused: state.paused }, t(now));
    expect({ fire: d.fire?.toISOString() ?? null, missed: d.missed?.count ?? 0, next: d.next?.toISOString() ?? null }).toEqual(expected);
  });

  it('never fires early: a timer that wakes 1 ms before the instant gets the instant as next', () => {
    const d = decide(every2s, { anchor: t('2030-01-01T00:00:00Z') }, t('2030-01-01T00:00:01.999Z'));
    expect(d.fire).toBeNull();
    expect(d.next?.toISOString()).toBe('2030-01-01T00:00:02.000Z');
  });

  it('counts a long outage up to the limit', () => {
    const d = decide(every2s, { anchor: t('2030-01-01T00:00:00Z') }, t('2030-01-02T00:00:00.500Z'), { missedLimit: 50 });
    expect(d.fire?.toISOString()).toBe('2030-01-02T00:00:00.000Z');
    expect(d.missed).toMatchObject({ count: 50, atLeast: true });
  });
});

describe('fire names', () => {
  it.each([
    ['nightly-t', '2030-01-01T00:00:02.000Z', 'nightly-t-1893456002'],
    ['p-hook', '2030-01-01T00:00:02.999Z', 'p-hook-1893456002'],
  ])('%s at %s is %s', (trigger, at, name) => {
    expect(cronFireName(trigger, new Date(at))).toBe(name);
  });
});
