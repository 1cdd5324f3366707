// When a cron trigger fires (SPEC §2.5, DESIGN "Cron fire"): the next instant of a 6-field
// expression in an IANA zone, with DST handled the way people expect (a repeated wall-clock time
// fires once; a skipped one fires once, at the first instant after the gap), and the decision
// the scheduler takes when it wakes: fire the latest due instant within the catch-up window,
// record older ones as missed, never fire early, never replay in bulk.
import { Lru } from '../lib/lru.js';
import { parseCron } from '../manifest/cron.js';

export const DEFAULT_CATCH_UP_MS = 5 * 60_000;

/** One formatter per zone spelling (zones are accepted in any letter case), about 28 KB each: bounded. */
const offsetFormats = new Lru<Intl.DateTimeFormat>(1024);

/** Offset of `zone` from UTC at `at`, in minutes (east positive). */
export function zoneOffsetMinutes(zone: string, at: Date): number {
  let format = offsetFormats.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
    offsetFormats.set(zone, format);
  }
  const parts = Object.fromEntries(format.formatToParts(at).map((p) => [p.type, p.value]));
  const wall = Date.UTC(Number(parts.year), Number(parts.month) - 1, Number(parts.day), Number(parts.hour), Number(parts.minute), Number(parts.second));
  return Math.round((wall - Math.floor(at.getTime() / 1000) * 1000) / 60_000);
}

const DAY_MS = 86_400_000;

/** Instants in (from, to] at which the zone's offset grows (spring forward), to the second. */
function gapsBetween(zone: string, from: Date, to: Date): { at: Date; skippedMinutes: number }[] {
  const gaps: { at: Date; skippedMinutes: number }[] = [];
  let lo = from.getTime();
  let loOffset = zoneOffsetMinutes(zone, from);
  while (lo < to.getTime()) {
    const hi = Math.min(lo + DAY_MS, to.getTime());
    const hiOffset = zoneOffsetMinutes(zone, new Date(hi));
    if (hiOffset > loOffset) {
      // Binary search to the first second with the new offset.
      let a = lo;
      let b = hi;
      while (b - a > 1000) {
        const mid = a + Math.floor((b - a) / 2000) * 1000;
        if (zoneOffsetMinutes(zone, new Date(mid)) > loOffset) b = mid;
        else a = mid;
      }
      gaps.push({ at: new Date(b), skippedMinutes: hiOffset - loOffset });
    }
    lo = hi;
    loOffset = hiOffset;
  }
  return gaps;
}

/** Whether the expression matches a wall-clock time in [start, start + minutes) (wall times as UTC dates). */
function matchesWallRange(expression: string, start: number, minutes: number): boolean {
  const next = parseCron(expression, 'UTC', new Date(start - 1000)).next().toDate().getTime();
  return next >= start && next < start + minutes * 60_000;
}

/**
 * The first instant strictly after `after` at which `expression` fires in `zone`. A wall-clock
 * time that a spring-forward gap skips fires at the first instant after the gap.
 */
export function nextCronInstant(expression: string, zone: string, after: Date): Date {
  const candidate = parseCron(expression, zone, after).next().toDate();
  for (const gap of gapsBetween(zone, after, candidate)) {
    if (gap.at.getTime() <= after.getTime() || gap.at.getTime() >= candidate.getTime()) continue;
    const offsetBefore = zoneOffsetMinutes(zone, new Date(gap.at.getTime() - 1000));
    const skippedWallStart = gap.at.getTime() + offsetBefore * 60_000;
    if (matchesWallRange(expression, skippedWallStart, gap.skippedMinutes)) return gap.at;
  }
  return candidate;
}

/** The schedule fields of a Trigger spec. */
export interface ScheduleSpec {
  type: 'cron' | 'webhook';
  enabled: boolean;
  cron?: string;
  runAt?: string;
  timezone: string;
}

/** The fields whose change is a schedule edit (a new key: no catch-up of older instants). */
export function scheduleKey(spec: ScheduleSpec): string {
  return JSON.stringify([spec.type, spec.enabled, spec.cron ?? null, spec.runAt ?? null, spec.timezone]);
}

export interface ScheduleState {
  /** Instants at or before this are handled (fired, recorded missed, or before the schedule existed). */
  anchor: Date;
  /** A run-once trigger that fired or whose instant was missed. */
  dormant?: boolean;
  paused?: boolean;
}

export type ScheduleDecision = {
  /** The instant to fire now, if any (never later than `now`). */
  fire: Date | null;
  /** Instants older than the catch-up window that will not fire (at most `missedLimit` counted). */
  missed: { count: number; first: Date; last: Date; atLeast: boolean } | null;
  /** When to look again: the next instant after `now` (null: nothing scheduled). */
  next: Date | null;
};

export interface DecideOptions {
  catchUpMs?: number;
  /** The most instants counted when recording missed ones. */
  missedLimit?: number;
}

/**
 * What the scheduler does for a trigger at `now`: fire the latest instant in (anchor, now] when it
 * is within the catch-up window; older instants in that range are missed.
 */
export function decide(spec: ScheduleSpec, state: ScheduleState, now: Date, options: DecideOptions = {}): ScheduleDecision {
  const catchUpMs = options.catchUpMs ?? DEFAULT_CATCH_UP_MS;
  const none: ScheduleDecision = { fire: null, missed: null, next: null };
  if (spec.type !== 'cron' || !spec.enabled || state.paused) return none;
  if (spec.runAt !== undefined) {
    const at = new Date(spec.runAt);
    // The anchor does not apply: an instant already past when the trigger appears still fires (within the window).
    if (state.dormant) return none;
    if (at.getTime() > now.getTime()) return { ...none, next: at };
    if (now.getTime() - at.getTime() <= catchUpMs) return { ...none, fire: at };
    return { ...none, missed: { count: 1, first: at, last: at, atLeast: false } };
  }
  if (spec.cron === undefined) return none;
  const expression = spec.cron;
  const zone = spec.timezone;
  const windowStart = new Date(Math.max(state.anchor.getTime(), now.getTime() - catchUpMs - 1));
  let fire: Date | null = null;
  for (let at = nextCronInstant(expression, zone, windowStart); at.getTime() <= now.getTime(); at = nextCronInstant(expression, zone, at)) fire = at;
  // Every instant in (anchor, now] that does not fire now is missed (counted up to a limit).
  let missed: ScheduleDecision['missed'] = null;
  const limit = options.missedLimit ?? 1000;
  const missedEnd = fire ?? new Date(now.getTime() + 1);
  for (let at = nextCronInstant(expression, zone, state.anchor); at.getTime() < missedEnd.getTime(); at = nextCronInstant(expression, zone, at)) {
    if (!missed) missed = { count: 0, first: at, last: at, atLeast: false };
    if (missed.count >= limit) { missed.atLeast = true; break; }
    missed.count += 1;
    missed.last = at;
  }
  return { fire, missed, next: nextCronInstant(expression, zone, now) };
}
