/**
 * The JSON Schema `pattern` of a client date-time for the OpenAPI document: ISO-8601 with `Z` or
 * an offset (zod's `z.iso.datetime({ offset: true })` pattern) and, in front of it, the range rule
 * every date-time the API reads follows (`clientTimeInRange`: 0001-01-01T00:00:00Z to
 * 9999-12-31T23:59:59.999Z once in UTC), so that `0000-06-01T00:00:00Z` or
 * `0001-01-01T00:00:00+14:00` (year 0000 in UTC) do not match while `0000-12-31T23:00:00-05:00`
 * (0001-01-01T04:00:00Z) does. Only the document reads it; the service applies the rule itself.
 */
import { z } from 'zod';

/** One digit from `a` to `b` (a ≤ b) as a regex. */
const digit = (a: number, b: number) => (a === b ? String(a) : `[${a}-${b}]`);

/** Two-digit text from `lo` to `hi` (0 ≤ lo ≤ hi ≤ 99) as one regex group, e.g. 5 to 37 → `(?:0[5-9]|[12][0-9]|3[0-7])`. */
function twoDigits(lo: number, hi: number): string {
  const [lt, lu, ht, hu] = [Math.floor(lo / 10), lo % 10, Math.floor(hi / 10), hi % 10];
  if (lt === ht) return `(?:${lt}${digit(lu, hu)})`;
  // Whole tens (from lo's when it starts at 0, to hi's when it ends at 9) in one part.
  const [fullFrom, fullTo] = [lu === 0 ? lt : lt + 1, hu === 9 ? ht : ht - 1];
  const parts = [
    ...(lu === 0 ? [] : [`${lt}${digit(lu, 9)}`]),
    ...(fullFrom <= fullTo ? [`${digit(fullFrom, fullTo)}[0-9]`] : []),
    ...(hu === 9 ? [] : [`${ht}${digit(0, hu)}`]),
  ];
  return `(?:${parts.join('|')})`;
}

const pad = (n: number) => String(n).padStart(2, '0');
/** Highest hour of an offset (as the ISO-8601 pattern allows them) and of a time of day. */
const HOURS = 23;

/** What comes after a position in the time of day up to the offset: anything but its sign (the date's `-` are behind). */
const upTo = (sign: '+' | '-') => (sign === '+' ? '[^+]*\\+' : '[^-]*-');

/**
 * At a time of day's hours `hh`: alternatives of `hh` for which `offsetHours(hh)` gives the
 * offset hours `HH` (after `sign`) that are meant, as [lo, hi] (empty when lo > hi).
 */
function byLocalHour(sign: '+' | '-', offsetHours: (hour: number) => [number, number]): string {
  const alternatives: string[] = [];
  for (let hour = 0; hour <= HOURS; hour++) {
    const [lo, hi] = offsetHours(hour);
    if (Math.max(lo, 0) <= Math.min(hi, HOURS)) alternatives.push(`${pad(hour)}(?=${upTo(sign)}${twoDigits(Math.max(lo, 0), Math.min(hi, HOURS))}:)`);
  }
  return `(?:${alternatives.join('|')})`;
}

/**
 * At a time of day's minutes `mm` (tens `a`, units `b`), with the offset's minutes `MM` (tens `c`,
 * units `d`) at the text's end: `mm + MM ≤ 59` (`sum: 'below 60'`), `mm + MM ≥ 60` (`'60 or more'`)
 * or `mm < MM` (`'below'`), told by the tens (`a + c`, `a` against `c`) and, when they tie, the
 * units: a few alternatives where all sixty minutes would take sixty.
 */
function byLocalMinute(sign: '+' | '-', relation: 'below 60' | '60 or more' | 'below'): string {
  const offsetMinutes = `${upTo(sign)}[0-9]{2}:`;
  const tensDecide: string[] = [];
  const tensTie: string[] = [];
  const unitsDecide: string[] = [];
  for (let a = 0; a <= 5; a++) {
    // The offset's tens c that decide alone, and the one that ties.
    const [lo, hi, tie] = relation === 'below 60' ? [0, 4 - a, 5 - a] : relation === '60 or more' ? [6 - a, 5, 5 - a] : [a + 1, 5, a];
    if (lo <= hi) tensDecide.push(`${a}(?=[0-9]${offsetMinutes}${digit(lo, hi)})`);
    tensTie.push(`${a}(?=[0-9]${offsetMinutes}${tie})`);
  }
  for (let b = 0; b <= 9; b++) {
    const [lo, hi] = relation === 'below 60' ? [0, 9 - b] : relation === '60 or more' ? [10 - b, 9] : [b + 1, 9];
    if (lo <= hi) unitsDecide.push(`${b}(?=${offsetMinutes}[0-9]${digit(lo, hi)}$)`);
  }
  return `(?:(?:${tensDecide.join('|')})|(?:${tensTie.join('|')})(?:${unitsDecide.join('|')}))`;
}

/**
 * Date-times outside the range (as a lookahead's alternatives, from the text's start): a date of
 * year 0000 but December 31; December 31 of year 0000 in UTC or ahead of it (`Z`, `+hh:mm`,
 * `-00:00`), or behind it by less than what is left of the day; January 1 of year 0001 earlier
 * in the day than its `+` offset; December 31 of year 9999 with a `-` offset that reaches the next
 * day. Hours decide first (local hours plus offset hours below 23, or 24 and more), then minutes
 * (hours summing to 23, minutes to below 60…); seconds never decide, the range's ends being whole minutes.
 */
function outOfRange(): string {
  return [
    '0000-(?!12-31T)',
    '0000-12-31T[^Z+-]*(?:Z|\\+|-00:00$)',
    // 0000-12-31, behind UTC by HH:MM: out while hh:mm + HH:MM < 24:00.
    `0000-12-31T${byLocalHour('-', (h) => [0, 22 - h])}`,
    `0000-12-31T${byLocalHour('-', (h) => [23 - h, 23 - h])}:${byLocalMinute('-', 'below 60')}`,
    // 0001-01-01, ahead of UTC by HH:MM: out while hh:mm < HH:MM.
    `0001-01-01T${byLocalHour('+', (h) => [h + 1, HOURS])}`,
    `0001-01-01T${byLocalHour('+', (h) => [h, h])}:${byLocalMinute('+', 'below')}`,
    // 9999-12-31, behind UTC by HH:MM: out once hh:mm + HH:MM ≥ 24:00.
    `9999-12-31T${byLocalHour('-', (h) => [24 - h, HOURS])}`,
    `9999-12-31T${byLocalHour('-', (h) => [23 - h, 23 - h])}:${byLocalMinute('-', '60 or more')}`,
  ].join('|');
}

/** zod's pattern of ISO-8601 date-times with `Z` or an offset (anchored `^…$`), as its JSON Schema gives it. */
const ISO_DATE_TIME_PATTERN = (z.toJSONSchema(z.iso.datetime({ offset: true })) as { pattern: string }).pattern;

/**
 * The `pattern` of a date-time the API reads: {@link ISO_DATE_TIME_PATTERN}, not matching what is
 * out of `clientTimeInRange`'s range ({@link outOfRange}).
 */
export const CLIENT_DATE_TIME_PATTERN = `^(?!${outOfRange()})${ISO_DATE_TIME_PATTERN.replace(/^\^/, '')}`;
