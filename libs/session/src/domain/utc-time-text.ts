/**
 * Two UTC texts of a client date-time (ISO-8601 with `Z` or an offset, a four-digit year, any
 * number of fraction digits, as the schemas accept it, those past the ninth ignored; see `client-time-rule`):
 *
 * - {@link utcExactTime}: `YYYY-MM-DDTHH:mm:ss.fffffffffZ`, always 9 fraction digits (nanoseconds),
 *   so that two times compare as text exactly as the instants do, to the precision a client may
 *   send. The read models keep and filter event times in this form.
 * - {@link utcMillisTime}: `YYYY-MM-DDTHH:mm:ss.sssZ` (`Date.toISOString`), the form every time
 *   the API answers takes: finer digits are cut (an instant at `.123456789Z` is answered as
 *   `.123Z`), so answered times sort as text in time order.
 *
 * An offset moves whole minutes, so the digits past the millisecond are those sent.
 */

const FRACTION = /T\d\d:\d\d:\d\d\.(\d+)/;
/** A time of day with more than 3 fraction digits: its part to the millisecond is group 1. */
const PAST_MILLISECOND = /(\d\d:\d\d:\d\d\.\d{3})\d+/;

/**
 * The instant of `text`, an ISO-8601 date-time (`Z` or an offset, any number of fraction digits),
 * in milliseconds since 1970-01-01T00:00:00Z, digits past the millisecond cut (as `Date.parse`
 * cuts up to 9 of them); NaN for text `Date` cannot read. Every reading of a client's date-time
 * text goes through it, never `Date.parse` itself: V8's `Date.parse` drops the leading zeros of a
 * fraction of 10 digits or more (`…00.0123456789Z` reads as `…00.123Z`, up to 999 ms late), so
 * the fraction is cut to 3 digits before `Date.parse` reads it. Pure.
 */
export function isoTimeMillis(text: string): number {
  return Date.parse(text.replace(PAST_MILLISECOND, '$1'));
}

/**
 * `text` (an ISO-8601 date-time) as UTC text with exactly 9 fraction digits, e.g.
 * `2026-01-01T05:30:00.1234+05:30` → `2026-01-01T00:00:00.123400000Z`. Text `Date` cannot read is
 * returned unchanged. Digits past the ninth are dropped.
 */
export function utcExactTime(text: string): string {
  const ms = isoTimeMillis(text);
  if (Number.isNaN(ms)) return text;
  const finer = (FRACTION.exec(text)?.[1] ?? '').slice(3, 9).padEnd(6, '0');
  return `${new Date(ms).toISOString().slice(0, 23)}${finer}Z`;
}

/**
 * `text` (an ISO-8601 date-time, or {@link utcExactTime}'s form) as `Date.toISOString` writes it:
 * UTC with milliseconds, finer digits cut. Text `Date` cannot read is returned unchanged.
 */
export function utcMillisTime(text: string): string {
  const ms = isoTimeMillis(text);
  return Number.isNaN(ms) ? text : new Date(ms).toISOString();
}

/** True when `text`'s instant (an ISO-8601 date-time) has digits past the millisecond that are not all 0. */
export function hasSubMillisecond(text: string): boolean {
  return /[1-9]/.test((FRACTION.exec(text)?.[1] ?? '').slice(3, 9));
}
