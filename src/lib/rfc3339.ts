// RFC 3339 times from callers (`since`, `expires_at`): with their offset, and days the calendar
// has. Date.parse takes `2026-02-30` as March 2nd and a time without an offset as local time.

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i;

/** Epoch milliseconds of an RFC 3339 time with an offset, or null when it is not one (or names a day that does not exist). */
export function parseRfc3339(value: string): number | null {
  const m = RFC3339.exec(value);
  if (!m) return null;
  const time = Date.parse(value);
  if (Number.isNaN(time)) return null;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day ? time : null;
}
