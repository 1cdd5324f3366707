// Durations people type: `90s`, `15m`, `12h`, `30d`, `2w` (one number, one unit).
const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** Milliseconds of `text`, or null when it is not a positive whole number followed by s, m, h, d or w. */
export function parseDuration(text: string): number | null {
  const m = /^(\d{1,9})([smhdw])$/.exec(text.trim());
  if (!m) return null;
  const ms = Number(m[1]) * UNIT_MS[m[2]!]!;
  return ms > 0 ? ms : null;
}

export const DURATION_HELP = 'a whole number and a unit: s, m, h, d or w (e.g. 90s, 12h, 30d)';
