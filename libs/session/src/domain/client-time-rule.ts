/**
 * The one range rule for client-given date-times, on every route (an event's `createdAt`, recall's
 * `from`/`to`, the session list's `updatedSince`, a policy's read-only `setAt`): the instant, once
 * in UTC, lies within years 0001 to 9999. The read models keep times as ISO-8601 UTC text
 * (`toISOString`) and compare them as strings; outside that range `toISOString` writes an
 * expanded year (`0001-01-01T00:00:00+01:00` is `0000-12-31T23:00:00.000Z`, a minute past
 * `9999-12-31T23:00:00-01:00` is `+010000-01-01T00:01:00.000Z`, `0000-01-01T00:00:00-01:00` is
 * `-000001-…`) that sorts out of order, and year 0000 is not a year to many clients (Python's
 * `datetime`, PostgreSQL's `timestamptz`) reading the time back. The ISO-8601 form itself (a
 * four-digit year, `Z` or an offset) is the schemas' rule.
 */

import { LENGTH_UNIT } from '@lib/compaction';
import { isoTimeMillis } from './utc-time-text';

/** Earliest client time accepted (UTC). */
export const MIN_CLIENT_TIME = '0001-01-01T00:00:00.000Z';

/** Latest client time accepted (UTC). */
export const MAX_CLIENT_TIME = '9999-12-31T23:59:59.999Z';

/** The 400 message (after the field name) for a date-time outside {@link MIN_CLIENT_TIME}..{@link MAX_CLIENT_TIME}. */
export const CLIENT_TIME_RANGE_RULE = `must be from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z once in UTC (years 0001 to 9999, as times are kept and answered in UTC)`;

/**
 * The longest client date-time accepted, in characters (Unicode code points, the unit of every
 * length limit of the API and of zod's `max`; a valid one is ASCII):
 * room for a fraction of up to 74 digits with an offset (times are compared to the nanosecond, the
 * ninth digit; the rest are ignored, but a client's own precision is taken as sent). Longer text is
 * refused before its format is read, so a megabyte of fraction digits is neither parsed nor kept.
 */
export const MAX_CLIENT_TIME_LENGTH = 100;

/**
 * The 400 message (after the field name) for a date-time of `length` characters (Unicode code points), past
 * {@link MAX_CLIENT_TIME_LENGTH}.
 */
export function clientTimeTooLong(length: number): string {
  return `must be an ISO-8601 date-time of at most ${MAX_CLIENT_TIME_LENGTH} ${LENGTH_UNIT}, not ${length} (e.g. 2026-01-31T12:00:00.123456789+01:00: times are compared to the nanosecond, so a fraction of a second needs at most 9 digits)`;
}

const MIN_MS = Date.parse(MIN_CLIENT_TIME);
const MAX_MS = Date.parse(MAX_CLIENT_TIME);

/**
 * True when `text`, an ISO-8601 date-time (already checked as such), is an instant from
 * {@link MIN_CLIENT_TIME} to {@link MAX_CLIENT_TIME} (milliseconds; finer digits are dropped, see
 * {@link isoTimeMillis}); false for anything else, including text `Date` cannot read.
 */
export function clientTimeInRange(text: string): boolean {
  const ms = isoTimeMillis(text);
  return ms >= MIN_MS && ms <= MAX_MS;
}
