// Cron expressions (exactly 6 fields, parsed by cron-parser) and IANA zone names, shared by the
// manifest rules and by src/triggers (next fire time).
import { CronExpressionParser, type CronExpression } from 'cron-parser';
import { Lru } from '../lib/lru.js';

export const CRON_FIELDS = ['second', 'minute', 'hour', 'day of month', 'month', 'day of week'] as const;

/** Parses a 6-field expression; throws an Error whose message a person understands. */
export function parseCron(expression: string, timezone = 'UTC', currentDate: Date = new Date()): CronExpression {
  const fields = expression.trim().split(/\s+/).filter(Boolean);
  if (fields.length !== CRON_FIELDS.length) {
    throw new Error(`must have exactly 6 fields (${CRON_FIELDS.join(', ')}), found ${fields.length}`);
  }
  try {
    return CronExpressionParser.parse(fields.join(' '), { tz: timezone, currentDate });
  } catch (err) {
    throw new Error(`is not a valid cron expression: ${(err as Error).message}`);
  }
}

/** The problem with a cron expression, or undefined when it is valid. */
export function cronProblem(expression: string): string | undefined {
  try {
    parseCron(expression);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/** Names already checked (constructing a DateTimeFormat is slow); bounded: a manifest an agent pushed may name any string. */
const zoneValidity = new Lru<boolean>(1024);

/** IANA zone names such as `UTC` or `Europe/Paris`; offsets like `+02:00` are not zones. */
export function isIanaZone(name: string): boolean {
  let valid = zoneValidity.get(name);
  if (valid === undefined) {
    valid = /^[A-Za-z]/.test(name) && acceptedByIntl(name);
    zoneValidity.set(name, valid);
  }
  return valid;
}

function acceptedByIntl(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}
