/**
 * Request shapes of the HTTP API, as zod schemas (validation and the OpenAPI document come from
 * the same definitions). Limits come from {@link ServiceConfig}. Native events follow
 * `conformance/README.md`; every object is strict (unknown fields are rejected, naming the field).
 */
import { z } from 'zod';
import {
  CLIENT_TIME_RANGE_RULE,
  clientIdProblem,
  clientTimeInRange,
  clientTimeTooLong,
  codePointLength,
  COMPACTION_ID_FORM,
  COMPACTION_ID_PATTERN,
  inexactJsonNumberAt,
  isExactJsonNumber,
  INEXACT_JSON_NUMBER_RULE,
  MAX_EXACT_JSON_INTEGER,
  hasLoneSurrogate,
  LENGTH_UNIT,
  MAX_CLIENT_ID_LENGTH,
  MAX_CLIENT_TIME_LENGTH,
  MAX_RECALL_CURSOR_LENGTH,
  MAX_RECALL_QUERY_LENGTH,
  RECALL_QUERY_BLANK,
  RECALL_QUERY_TOO_LONG,
  utcExactTime,
} from '@lib/session';
import { blankTextRefusal, overLimitMessage, showsNothing, SHOWS_NOTHING_DESCRIPTION } from '@lib/compaction';
import { CANONICAL_DECIMAL_RULE, MAX_REVISION, parseCanonicalInteger, rememberJsonText } from '@lib/event-store';
import type { ServiceConfig } from '../config/service-config';
import { booleanQueryParam } from './boolean-query-param';
import { CLIENT_DATE_TIME_PATTERN } from './client-time-pattern';
import { decimalRangePattern } from './decimal-range-pattern';
import { SESSION_ID_PATTERN, sessionIdProblem } from './session-id-rule';
import { identityFilter } from './validate';

/**
 * True when a string or key anywhere in the JSON value `value` has a lone surrogate. Walks the
 * value itself (iteratively): `JSON.stringify` escapes lone surrogates as `\udXXX`, so its text
 * never shows them.
 */
export function jsonHasLoneSurrogate(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (hasLoneSurrogate(v)) return true;
    } else if (v !== null && typeof v === 'object') {
      for (const [key, child] of Object.entries(v as Record<string, unknown>)) {
        if (hasLoneSurrogate(key)) return true;
        stack.push(child);
      }
    }
  }
  return false;
}

/** What the OpenAPI document says of a client id: its lengths (JSON Schema counts code points, as the rule does) and the characters refused. */
const CLIENT_ID_META = {
  minLength: 1,
  maxLength: MAX_CLIENT_ID_LENGTH,
  description: `1 to ${MAX_CLIENT_ID_LENGTH} ${LENGTH_UNIT}, without control or invisible format characters (a zero-width joiner only inside an emoji ZWJ sequence such as 👨‍👩‍👧) or noncharacters (U+FFFF), showing something (not only spaces or fillers)`,
};

/** Client ids (event, tool-call and user ids, and the filters naming them): {@link clientIdProblem}, the rule `/messages` follows too. */
export const clientId = z
  .string()
  .superRefine((s, ctx) => {
    const problem = clientIdProblem(s);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  })
  .meta(CLIENT_ID_META);

/** A client id as the OpenAPI document shows it where the request is not validated by zod as a whole (OpenAI messages): a string with {@link CLIENT_ID_META}. */
export const clientIdText = () => z.string().meta(CLIENT_ID_META);

/** Deepest nesting accepted in `metadata` (objects and arrays count one level each). */
export const MAX_METADATA_DEPTH = 16;
/** Largest `metadata` accepted, in characters (Unicode code points) of its JSON. */
export const MAX_METADATA_LENGTH = 65_536;

/** True when `value` nests objects/arrays at most `max` levels deep (iterative: never overflows the stack). */
export function jsonDepthAtMost(value: unknown, max: number): boolean {
  return jsonLimitExceeded(value, max, Infinity) !== 'depth';
}

/**
 * The first limit the JSON value `value` is found to exceed, in one walk (depth first, iterative)
 * that stops there: `depth` when it nests objects/arrays more than `maxDepth` levels deep,
 * `length` when its JSON text surely holds more than `maxLength` characters (Unicode code points:
 * a lower bound of it, summed as the walk goes: brackets, commas, colons, quotes, each string at
 * least half its UTF-16 length, each other value at least one character); undefined when neither
 * was found, and then the JSON of `value` holds at most about 13 × `maxLength` characters (a number
 * counted as one may take 24, an escaped character 6), so serializing it to check exactly costs little. So refusing
 * metadata of 300,000 keys looks at ~13,000 of them, never serializes it (newcomer ncbounds).
 */
export function jsonLimitExceeded(value: unknown, maxDepth: number, maxLength: number): 'depth' | 'length' | undefined {
  return scanJsonValue(value, maxDepth, maxLength).exceeded;
}

/** What {@link scanJsonValue} found in its one walk of a JSON value. */
export interface JsonValueScan {
  /** The first limit found exceeded, as {@link jsonLimitExceeded} answers (the walk stopped there), else undefined. */
  exceeded: 'depth' | 'length' | undefined;
  /**
   * Whether a number {@link isExactJsonNumber} refuses (not finite, or an integer past ±(2^53 − 1))
   * was met before the walk stopped: when `exceeded` is undefined, whether `value` holds one.
   */
  inexactNumber: boolean;
  /** UTF-16 code units of the strings met (keys left out) before the walk stopped: when `exceeded` is undefined, of all of `value`'s strings. */
  stringUnits: number;
}

/**
 * {@link jsonLimitExceeded}'s walk of `value`, which also notes whether a number the service cannot
 * keep as sent was met ({@link JsonValueScan.inexactNumber}) and adds up its strings' code units
 * ({@link JsonValueScan.stringUnits}, which the projector would otherwise walk the value again for), so
 * that metadata is walked once by its checks (then serialized once), not once per check.
 */
export function scanJsonValue(value: unknown, maxDepth: number, maxLength: number): JsonValueScan {
  const values: unknown[] = [value];
  const depths: number[] = [0];
  let length = 0;
  let inexactNumber = false;
  let stringUnits = 0;
  const text = (s: string) => 2 + Math.ceil(s.length / 2);
  while (values.length > 0) {
    const v = values.pop();
    const depth = depths.pop()!;
    if (v === null || typeof v !== 'object') {
      if (typeof v === 'string') {
        stringUnits += v.length;
        length += text(v);
      } else {
        if (typeof v === 'number' && !inexactNumber && !isExactJsonNumber(v)) inexactNumber = true;
        length += 1;
      }
      if (length > maxLength) return { exceeded: 'length', inexactNumber, stringUnits };
      continue;
    }
    if (depth >= maxDepth) return { exceeded: 'depth', inexactNumber, stringUnits };
    length += 2;
    if (Array.isArray(v)) {
      length += Math.max(0, v.length - 1);
      for (let i = v.length - 1; i >= 0; i--) {
        values.push(v[i]);
        depths.push(depth + 1);
      }
    } else {
      const keys = Object.keys(v);
      length += Math.max(0, keys.length - 1);
      for (const key of keys) {
        // the key and its colon
        length += text(key) + 1;
        if (length > maxLength) return { exceeded: 'length', inexactNumber, stringUnits };
        values.push((v as Record<string, unknown>)[key]);
        depths.push(depth + 1);
      }
    }
    if (length > maxLength) return { exceeded: 'length', inexactNumber, stringUnits };
  }
  return { exceeded: undefined, inexactNumber, stringUnits };
}

/** The ranges of {@link integerInRange} schemas, by their zod definition (shared by the copies `.describe()` makes). */
const INTEGER_RANGES = new WeakMap<object, { minimum: bigint; maximum: bigint }>();

/**
 * A decimal integer in `[min, max]` sent as text (query parameters), read by
 * {@link parseCanonicalInteger} (canonical digits only: `"03"`, `"+3"`, `" 3"`, `"3e0"` are
 * refused), with a message naming the range and the spelling. Out-of-range values are 400s, never
 * 500s (issue 17, item 2). The OpenAPI document shows the rule as the parameter's `pattern`
 * (the canonical spellings of the range's integers only, {@link decimalRangePattern}: `limit=0`
 * and `9223372036854775808` do not match) and `maxLength` (the digits of `max`; in a body too,
 * e.g. the policy's read-only `revision`), and as a query parameter also the integer it is
 * ({@link integerRangeOf}), so that typed clients may pass a number.
 */
export function integerInRange(min: bigint, max: bigint) {
  const message = `must be an integer from ${min} to ${max}, ${CANONICAL_DECIMAL_RULE}`;
  const schema = z
    .string({ error: message })
    .refine((s) => parseCanonicalInteger(s, min, max) !== null, { message })
    .meta({ pattern: decimalRangePattern(min, max), maxLength: String(max).length });
  INTEGER_RANGES.set(schema._zod.def, { minimum: min, maximum: max });
  return schema;
}

/** The range of an {@link integerInRange} schema (or of a copy of it `.describe()` made), else undefined. */
export function integerRangeOf(schema: z.core.$ZodType): { minimum: bigint; maximum: bigint } | undefined {
  return INTEGER_RANGES.get(schema._zod.def);
}

/** A revision or position sent as text (`atRevision`, `fromRevision`, `minPosition`): 0 to {@link MAX_REVISION}, see {@link integerInRange}. */
export const revisionText = () => integerInRange(0n, MAX_REVISION);

/**
 * A revision or position validated by {@link revisionText} → its value (undefined when it was not
 * sent), read by the same {@link parseCanonicalInteger}.
 */
export function revisionOf(text: string | undefined): bigint | undefined {
  return text === undefined ? undefined : (parseCanonicalInteger(text) ?? undefined);
}

/** ISO-8601 date-times with `Z` or an offset: the rule of every date-time the API reads. */
const isoDateTime = z.iso.datetime({ offset: true });

/**
 * True when `text` would be a date-time (as {@link isoDateTime} reads it) with a `+` for its space:
 * a `+` left unencoded in a query string reads as a space (`from=2026-01-01T00:00:00+01:00`).
 */
export function hasSpaceForPlusOffset(text: string): boolean {
  return text.includes(' ') && isoDateTime.safeParse(text.replace(/ /g, '+')).success;
}

/** The 400 message for a date-time query parameter that is not one; {@link hasSpaceForPlusOffset} says why and what to send. */
export function dateTimeParamMessage(input: unknown): string {
  const example = 'e.g. 2026-01-31T12:00:00Z';
  if (typeof input === 'string' && hasSpaceForPlusOffset(input)) {
    const sent = input.replace(/ /g, '%2B');
    return `must be an ISO-8601 date-time: its "+" offset arrived as a space (an unencoded "+" in a query string reads as a space): send the + as %2B (${sent}), or use Z for UTC (${example})`;
  }
  return `must be an ISO-8601 date-time such as 2026-01-31T12:00:00Z (a "+hh:mm" offset sent as %2Bhh:mm)`;
}

/**
 * A date-time query parameter (recall's `from`/`to`, the session list's `updatedSince`): ISO-8601
 * with `Z` or an offset, refused (400) with {@link dateTimeParamMessage} (or {@link dateTimeFix}'s
 * message, its `+` shown as `%2B`).
 */
export const dateTimeParam = () => clientDateTime((input) => dateTimeParamMessage(input), '%2B');

/**
 * The one rule of a query's time range [`start`, `end`) (recall's `from`/`to`, the session list's
 * `updatedSince`/`updatedBefore`), as the arguments of a zod `refine`: when both are given, `start`
 * must be before `end`, compared at full precision (`utcExactTime`: nanoseconds, offsets applied);
 * an empty or inverted range matches nothing, so it is a client's mistake: 400 `validation_failed`
 * at `start` (`<start>: must be earlier than <end>`).
 */
export function orderedTimeRange<S extends string, E extends string>(
  start: S,
  end: E,
): [check: (q: Partial<Record<S | E, string>>) => boolean, params: { message: string; path: string[] }] {
  const check = (q: Partial<Record<S | E, string>>): boolean => {
    const from = q[start];
    const to = q[end];
    return !from || !to || utcExactTime(from) < utcExactTime(to);
  };
  return [check, { message: `must be earlier than ${end}`, path: [start] }];
}

/** An ISO-8601 expanded year with its `+` sign: group 1 its digits (`+2026-…`, `+002026-…`). */
const SIGNED_YEAR = /^\+(\d{4,})(?=-\d\d-\d\d)/;
/** A year past 9999: five or more digits, or ISO-8601's expanded (signed) years. */
const EXPANDED_YEAR = /^(?:[+-]?\d{5,}|[+-]\d{4})-\d\d-\d\d/;
/** Second 60 (a leap second) in an otherwise ISO-8601 date-time, with its fraction when it has one (`:60.5`: still second 60). */
const LEAP_SECOND = /^(\d{4,}-\d\d-\d\dT\d\d:\d\d):60(?:\.\d+)?/;

/** A space where ISO-8601 has its `T`, between date and time (RFC 3339 §5.6 allows it; the API does not). */
const SPACE_FOR_T = /^(\d{4,}-\d\d-\d\d) +(?=\d\d:)/;
/** Hours and minutes without seconds (`T12:00`, then a zone or nothing). */
const NO_SECONDS = /^(\d{4,}-\d\d-\d\dT\d\d:\d\d)(?=$|[Z+ -])/;
/** A date alone (`2026-12-03`), or with its zone only: no time of day. */
const DATE_ONLY = /^(\d{4,}-\d\d-\d\d)(?=$|Z$|[+ -]\d\d:?\d\d$)/;
/** The date and time fields of an ISO-8601 date-time (year, month, day, hour, minute, second), for {@link fieldsOutOfRange}. */
const DATE_TIME_FIELDS = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)/;
const MONTH_NAMES = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
/** An offset without its colon (`+0530`) at the end; in a query string its `+` may have arrived as a space. */
const OFFSET_WITHOUT_COLON = /([+ -])(\d\d)(\d\d)$/;

/**
 * What to fix when a number of milliseconds since 1970-01-01T00:00:00Z (Unix time, as
 * `Date.now()` gives) was sent for a date-time: the message, with that instant as the example
 * (or 2026-01-31T12:00:00Z when it is outside years 0001 to 9999, past 2^53 or ±Infinity, as a digit
 * string too long for a double reads); undefined for a fraction or NaN (not a count of milliseconds).
 */
export function epochMillisFix(millis: number): string | undefined {
  if (Number.isNaN(millis) || (Number.isFinite(millis) && !Number.isInteger(millis))) return undefined;
  const instant = new Date(millis);
  const example = !Number.isNaN(instant.getTime()) && clientTimeInRange(instant.toISOString()) ? instant.toISOString() : '2026-01-31T12:00:00Z';
  return `must be an ISO-8601 date-time as text, not a number: a number of milliseconds since 1970-01-01T00:00:00Z (Unix time) is not read; send the instant as text (e.g. ${example})`;
}

/** Days in `month` (1–12) of `year` (proleptic Gregorian, as ISO-8601 counts: February 29 in leap years). */
function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(2000, month, 0)).getUTCDate() - (month === 2 && !(year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)) ? 1 : 0);
}

/**
 * The fields of `text`'s date and time (`YYYY-MM-DDThh:mm:ss…`) that no calendar or clock has: a
 * month outside 01–12, a day past its month's last (`2026-02-30`: February 2026 has 28 days) or 00,
 * an hour past 23, a minute or second past 59 (second 60 is told apart, as a leap second). Answers
 * what is wrong, one phrase per field, and `text` with each such field set to the nearest one that
 * exists (its last day, hour 23, minute 59…); undefined when every field exists or `text` is not of
 * that shape.
 */
function fieldsOutOfRange(text: string): { fixes: string[]; fixed: string } | undefined {
  const m = DATE_TIME_FIELDS.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  const fixes: string[] = [];
  const within = (value: number, low: number, high: number) => Math.min(Math.max(value, low), high);
  const two = (n: number) => String(n).padStart(2, '0');
  const okMonth = within(month, 1, 12);
  if (okMonth !== month) fixes.push(`month ${m[2]} does not exist (months run from 01 to 12)`);
  const last = daysInMonth(year, okMonth);
  const okDay = within(day, 1, last);
  if (okDay !== day && okMonth === month)
    fixes.push(day === 0 ? 'day 00 does not exist (days start at 01)' : `there is no day ${day} in ${MONTH_NAMES[month - 1]} ${m[1]} (it has ${last} days)`);
  else if (okDay !== day) fixes.push(`day ${m[3]} is out of range (01 to 31 at most)`);
  const okHour = within(hour, 0, 23);
  if (okHour !== hour) fixes.push(`hour ${m[4]} is out of range (hours run from 00 to 23; midnight at the end of a day is 00 of the next)`);
  const okMinute = within(minute, 0, 59);
  if (okMinute !== minute) fixes.push(`minute ${m[5]} is out of range (00 to 59)`);
  const okSecond = second === 60 ? 60 : within(second, 0, 59);
  if (okSecond !== second) fixes.push(`second ${m[6]} is out of range (00 to 59)`);
  if (fixes.length === 0) return undefined;
  const fields = `${m[1]}-${two(okMonth)}-${two(okDay)}T${two(okHour)}:${two(okMinute)}:${two(okSecond)}`;
  return { fixes, fixed: fields + text.slice(m[0].length) };
}

/**
 * What to fix in `text`, a date-time {@link isoDateTime} refused, when the fix is one of these (else
 * undefined, for the caller's general message): a year past 9999 ({@link CLIENT_TIME_RANGE_RULE},
 * as year 0000 gets); a year in range with ISO-8601's expanded sign (`+2026-…`: write `2026-…`); digits only (Unix milliseconds, {@link epochMillisFix}); a space for the
 * `T`; a lower-case `t` or `z` (RFC 3339 allows them; the API reads ISO-8601's upper case); no
 * seconds; no time at all (a date alone: add `T00:00:00Z`); second 60 (a leap second: UTC text
 * here has none); a month, day, hour, minute or second that does not exist ({@link fieldsOutOfRange}:
 * `2026-02-30`, hour 25); an offset without its colon (`+0530`); no zone (`Z` or an offset
 * missing). Several at once are named together, with the text
 * so fixed as the example (its `+` written as `plus`: `%2B` in a query string).
 */
export function dateTimeFix(text: string, plus = '+'): string | undefined {
  const fixes: string[] = [];
  let fixed = text;
  // ISO-8601's expanded form of a year in range (`+2026-…`, `+002026-…`): the sign is the fault, not the year (newcomer ncfresh70 N3).
  const signed = SIGNED_YEAR.exec(text);
  if (signed && Number(signed[1]) >= 1 && Number(signed[1]) <= 9999) {
    fixed = `${String(Number(signed[1])).padStart(4, '0')}${text.slice(signed[0].length)}`;
    fixes.push('write the year as four digits, without a sign (ISO-8601\'s expanded years, "+2026", are not read)');
  } else if (EXPANDED_YEAR.test(text)) return CLIENT_TIME_RANGE_RULE;
  if (/^-?\d+$/.test(text)) return epochMillisFix(Number(text));
  if (SPACE_FOR_T.test(fixed)) {
    fixed = fixed.replace(SPACE_FOR_T, '$1T');
    fixes.push('write a "T" between date and time, not a space');
  }
  if (/[tz]/.test(fixed) && fixed.toUpperCase() !== fixed) {
    fixed = fixed.toUpperCase();
    fixes.push('write the "T" between date and time and the "Z" of UTC in upper case');
  }
  if (DATE_ONLY.test(fixed)) {
    const zoned = fixed.length > 10 && !/^\d{4,}-\d\d-\d\d$/.test(fixed);
    fixed = fixed.replace(DATE_ONLY, zoned ? '$1T00:00:00' : '$1T00:00:00Z');
    fixes.push(
      `the time is missing (a date alone names no instant): add ${zoned ? 'T00:00:00 before the zone' : 'T00:00:00Z'} for midnight${zoned ? '' : ' UTC'}`,
    );
  }
  if (NO_SECONDS.test(fixed)) {
    fixed = fixed.replace(NO_SECONDS, '$1:00');
    fixes.push('add the seconds (hh:mm:ss)');
  }
  if (LEAP_SECOND.test(fixed)) {
    fixed = fixed.replace(LEAP_SECOND, '$1:59.999');
    fixes.push('second 60 (a leap second) is not accepted, as times are kept in UTC without leap seconds: send second 59.999 or the next minute');
  }
  const outOfRange = fieldsOutOfRange(fixed);
  if (outOfRange) {
    fixed = outOfRange.fixed;
    fixes.push(...outOfRange.fixes);
  }
  const offset = OFFSET_WITHOUT_COLON.exec(fixed);
  if (offset && (offset[1] !== ' ' || plus !== '+') && isoDateTime.safeParse(fixed.replace(OFFSET_WITHOUT_COLON, '+$2:$3')).success) {
    fixed = fixed.replace(OFFSET_WITHOUT_COLON, `${offset[1] === '-' ? '-' : '+'}$2:$3`);
    if (offset[1] === ' ') fixes.push(`its "+" offset arrived as a space (an unencoded "+" in a query string reads as a space): send the + as ${plus}`);
    fixes.push(`write the offset with a colon (${offset[1] === '-' ? '-' : plus}${offset[2]}:${offset[3]}, as ±hh:mm)`);
  }
  if (!isoDateTime.safeParse(fixed).success && isoDateTime.safeParse(`${fixed}Z`).success) {
    fixed = `${fixed}Z`;
    fixes.push(`add its zone: "Z" when it is UTC, else its offset (${plus}hh:mm, e.g. ${plus}05:30), as a time without one names no instant`);
  }
  if (fixes.length === 0 || !isoDateTime.safeParse(fixed).success) return undefined;
  return `must be an ISO-8601 date-time: ${fixes.join('; ')} (e.g. ${fixed.replace('+', plus)})`;
}

/**
 * A client date-time, the rule of every date-time the API reads: ISO-8601 with `Z` or an offset,
 * an instant within years 0001 to 9999 once in UTC ({@link clientTimeInRange}; else 400
 * {@link CLIENT_TIME_RANGE_RULE}), of at most {@link MAX_CLIENT_TIME_LENGTH} characters (else 400
 * {@link clientTimeTooLong}, the format not read). Anything else is refused with {@link dateTimeFix}'s message (a JSON
 * number: {@link epochMillisFix}'s) when it says what to fix (its `+` written as `plus`), else with `formatMessage`.
 * The OpenAPI document shows both rules as its `pattern` ({@link CLIENT_DATE_TIME_PATTERN}).
 */
export function clientDateTime(formatMessage: (input: unknown) => string, plus = '+') {
  const format: NonNullable<Parameters<typeof z.iso.datetime>[0]> & Pick<z.core.$ZodCheckDef, 'when'> = {
    offset: true,
    // zod's check condition (the def's `when`, which its string-format parameters pass on but do not
    // type): not read past the length bound, which the max check below refuses (a fix message would
    // quote the text), nor for a non-string, which the type check has refused
    when: (payload) => typeof payload.value === 'string' && codePointLength(payload.value) <= MAX_CLIENT_TIME_LENGTH,
    error: (iss) =>
      (typeof iss.input === 'string' && !hasSpaceForPlusOffset(iss.input)
        ? dateTimeFix(iss.input, plus)
        : typeof iss.input === 'number'
          ? epochMillisFix(iss.input)
          : undefined) ?? formatMessage(iss.input),
  };
  return z.iso
    .datetime(format)
    .max(MAX_CLIENT_TIME_LENGTH, { error: (iss) => clientTimeTooLong(typeof iss.input === 'string' ? codePointLength(iss.input) : 0), abort: true })
    .refine(clientTimeInRange, { message: CLIENT_TIME_RANGE_RULE })
    .meta({ pattern: CLIENT_DATE_TIME_PATTERN });
}

/** What to send as `expectedRevision` (the 400 message for anything else). */
export const EXPECTED_REVISION_RULE =
  `must be "any" (the same as leaving it out: no check), "no_stream", "stream_exists" or the revision of the session's last event: an integer from 0 to ${MAX_REVISION} ` +
  `as a string ${CANONICAL_DECIMAL_RULE}, or as a JSON number up to ${Number.MAX_SAFE_INTEGER} (2^53 − 1)`;

/**
 * The 400 message for `expectedRevision` sent as a JSON number past 2^53 − 1, `read` being the
 * double JSON parsing gave (this service's parser as any other reads such a number as the nearest
 * double, so the revision the client meant may be lost: 9007199254740993 arrives as
 * 9007199254740992). Quotes what was read, says it may not be what was sent (the text is gone), and
 * asks for the revision's own digits as a decimal string, which carries it exactly.
 */
export function expectedRevisionImprecise(read: number): string {
  return (
    `is a JSON number past ${Number.MAX_SAFE_INTEGER} (2^53 − 1), read as ${BigInt(read)}: JSON numbers that large lose precision, so that may not be the number sent; ` +
    `send the revision as a decimal string, your revision's exact digits in quotes ("expectedRevision": "<digits>" rather than "expectedRevision": <digits>; ` +
    `any revision from 0 to ${MAX_REVISION}, ${CANONICAL_DECIMAL_RULE.replace(/ \(e\.g\. "42"\)$/, '')})`
  );
}

/**
 * The 400 message for `expectedRevision` sent as a JSON number certainly past 9223372036854775807
 * (2^63 − 1, the largest revision): read as a double above 2^63 (which 9223372036854775807 itself
 * rounds to, so 2^63 gets {@link expectedRevisionImprecise}), or too large for a double
 * (`1e400`, read as Infinity). No session reaches it, so a decimal string would not help.
 */
export const EXPECTED_REVISION_OUT_OF_RANGE = `is a JSON number past ${MAX_REVISION} (2^63 − 1), the largest revision: out of range; send the revision of the session's last event`;

/** Whether a JSON number sent as `expectedRevision` is certainly past the largest revision (see {@link EXPECTED_REVISION_OUT_OF_RANGE}). */
export function revisionNumberOutOfRange(value: number): boolean {
  return value > 2 ** 63;
}

/** The 400 message for `expectedRevision: null` (ambiguous between "no check" and "no stream yet", so refused rather than guessed). */
export const EXPECTED_REVISION_NULL =
  'is null: leave it out (or send "any") for no check, or send the revision of the session\'s last event (e.g. 8 or "8"), "no_stream" (the session must not exist yet) or "stream_exists"';

/** Per discriminated union: the option each string tag seen so far selects (only tags that select one: a bounded set). */
const OPTION_BY_TAG = new WeakMap<z.ZodType, Map<string, z.ZodType>>();

/** The option of a discriminated union whose discriminator field accepts `tag`, or undefined; remembered per string tag. */
function unionOptionFor(union: z.ZodType, options: z.ZodType[], discriminator: string, tag: unknown): z.ZodType | undefined {
  const known = typeof tag === 'string' ? OPTION_BY_TAG.get(union)?.get(tag) : undefined;
  if (known) return known;
  const option = options.find((o) => (o as unknown as { shape?: Record<string, z.ZodType> }).shape?.[discriminator]?.safeParse(tag).success);
  if (option && typeof tag === 'string') {
    let byTag = OPTION_BY_TAG.get(union);
    if (!byTag) OPTION_BY_TAG.set(union, (byTag = new Map<string, z.ZodType>()));
    byTag.set(tag, option);
  }
  return option;
}

/**
 * Optional body fields for which null is refused rather than read as absent (each one's schema as
 * it stands in its object): `expectedRevision`, whose null could mean "no check" as well as "no
 * session yet" ({@link EXPECTED_REVISION_NULL}). {@link nullOptionalsAsAbsent} keeps them, and the
 * OpenAPI document does not offer null for them.
 */
export const NULL_REFUSED_FIELDS = new WeakSet<z.ZodType>();

/**
 * Body fields that may be left out count as absent when sent as null, the one rule of every body
 * (native events, OpenAI messages on `/messages`, an append's `userId`, the policy and compaction
 * bodies; HTTP and NATS alike): returns `value` without them, for `schema` (a body or event schema of
 * {@link requestSchemas}, walked through its objects, arrays and discriminated unions). A field
 * for which null is a value of its own (an assistant's `text: null`, "no text") is kept, and so is
 * a required field (its error stays), one of {@link NULL_REFUSED_FIELDS} (its error stays) or an
 * unknown one (refused by the strict object). Returns
 * `value` itself when nothing is dropped; a copy keeps the other keys in their order, as own data
 * properties (a `__proto__` key stays a key). Only the parts of `value` where the schema has such a
 * field are looked at ({@link nullFieldsOf}): a tool call has none, so the 128,000 tool calls of a
 * refused body are not walked (newcomer: that walk cost 10× the body's `JSON.parse`).
 */
export function nullOptionalsAsAbsent(schema: z.ZodType, value: unknown): unknown {
  const def = (schema as unknown as { def: { type: string } & Record<string, unknown> }).def;
  switch (def.type) {
    case 'optional':
    case 'nullable':
      return nullOptionalsAsAbsent(def.innerType as z.ZodType, value);
    case 'array': {
      if (!Array.isArray(value) || !mayDropNulls(schema)) return value;
      const element = def.element as z.ZodType;
      let items: unknown[] | undefined;
      for (let i = 0; i < value.length; i++) {
        const item: unknown = value[i];
        const next = nullOptionalsAsAbsent(element, item);
        if (next !== item) (items ??= value.slice())[i] = next;
      }
      return items ?? value;
    }
    case 'union': {
      if (value === null || typeof value !== 'object' || typeof def.discriminator !== 'string' || !mayDropNulls(schema)) return value;
      const discriminator = def.discriminator;
      const tag = (value as Record<string, unknown>)[discriminator];
      const option = unionOptionFor(schema, def.options as z.ZodType[], discriminator, tag);
      return option ? nullOptionalsAsAbsent(option, value) : value;
    }
    case 'object': {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
      const sent = value as Record<string, unknown>;
      // The schema's fields are looked up in the object, not the object's keys in the schema: an object of
      // many unknown keys is copied (in its order) only when a field of it changes (newcomer ncbounds).
      let changed: Map<string, { next: unknown } | 'dropped'> | undefined;
      for (const { key, field, droppable } of nullFieldsOf(schema)) {
        if (!Object.hasOwn(sent, key)) continue;
        const child = sent[key];
        if (child === null && droppable) {
          (changed ??= new Map()).set(key, 'dropped');
          continue;
        }
        const next = nullOptionalsAsAbsent(field, child);
        if (next !== child) (changed ??= new Map()).set(key, { next });
      }
      if (changed === undefined) return value;
      const entries: Array<[string, unknown]> = [];
      for (const key of Object.keys(sent)) {
        const change = changed.get(key);
        if (change === undefined) entries.push([key, sent[key]]);
        else if (change !== 'dropped') entries.push([key, change.next]);
      }
      return Object.fromEntries(entries);
    }
    default:
      return value;
  }
}

/** A field of an object schema that {@link nullOptionalsAsAbsent} looks at: dropped when null (`droppable`), or holding such fields. */
interface NullField {
  key: string;
  field: z.ZodType;
  /** Optional, refusing null, not one of {@link NULL_REFUSED_FIELDS}: a null sent for it counts as absent. */
  droppable: boolean;
}

/** Per object schema, its {@link NullField}s ({@link nullFieldsOf}); per schema, whether {@link nullOptionalsAsAbsent} may change a value of it ({@link mayDropNulls}). */
const NULL_FIELDS = new WeakMap<z.ZodType, readonly NullField[]>();
const MAY_DROP_NULLS = new WeakMap<z.ZodType, boolean>();

/**
 * The fields of the object schema `schema` that {@link nullOptionalsAsAbsent} looks at, in the
 * schema's order: those dropped when null, and those whose schema may hold such a field
 * ({@link mayDropNulls}); the others are never read. Worked out once per schema (a field's
 * verdict depends on its schema alone: whether it takes undefined and null).
 */
function nullFieldsOf(schema: z.ZodType): readonly NullField[] {
  const known = NULL_FIELDS.get(schema);
  if (known) return known;
  const shape = (schema as unknown as { def: { shape: Record<string, z.ZodType> } }).def.shape;
  const fields: NullField[] = [];
  for (const key of Object.keys(shape)) {
    const field = shape[key];
    const droppable = !NULL_REFUSED_FIELDS.has(field) && field.safeParse(undefined).success && !field.safeParse(null).success;
    if (droppable || mayDropNulls(field)) fields.push({ key, field, droppable });
  }
  NULL_FIELDS.set(schema, fields);
  return fields;
}

/**
 * Whether {@link nullOptionalsAsAbsent} may give for a value of `schema` anything but the value
 * itself: an object schema with a field dropped when null or holding one, an array of such
 * values, a discriminated union with such an option, or such a schema made optional or nullable.
 * Remembered per schema.
 */
function mayDropNulls(schema: z.ZodType): boolean {
  const known = MAY_DROP_NULLS.get(schema);
  if (known !== undefined) return known;
  const def = (schema as unknown as { def: { type: string } & Record<string, unknown> }).def;
  let may = false;
  switch (def.type) {
    case 'optional':
    case 'nullable':
      may = mayDropNulls(def.innerType as z.ZodType);
      break;
    case 'array':
      may = mayDropNulls(def.element as z.ZodType);
      break;
    case 'union':
      may = typeof def.discriminator === 'string' && (def.options as z.ZodType[]).some(mayDropNulls);
      break;
    case 'object':
      may = nullFieldsOf(schema).length > 0;
      break;
  }
  MAY_DROP_NULLS.set(schema, may);
  return may;
}

/** Most tool calls one assistant event (or OpenAI assistant message) may make; more are refused (400). */
export const MAX_TOOL_CALLS_PER_EVENT = 128;

/** Most tool responses one native tool event may hold; more are refused (400): they go in further tool events. */
export const MAX_RESPONSES_PER_EVENT = 128;

export { SESSION_ID_PATTERN, SESSION_ID_RULE } from './session-id-rule';

/** Compaction ids (recall's `compactionId` filter, the compaction paths): UUIDs in any case (`COMPACTION_ID_PATTERN` of the domain). */
export { COMPACTION_ID_PATTERN };

/** What to fix in a recall `compactionId` that does not match {@link COMPACTION_ID_PATTERN}. */
export const COMPACTION_ID_RULE = `is not a compaction id: ${COMPACTION_ID_FORM}`;

/**
 * The refusal of more than `max` (`MAX_EVENTS_PER_REQUEST`) events or messages (`what`) in one
 * append, e.g. `at most 1000 events per request, the limit set by MAX_EVENTS_PER_REQUEST: split the
 * events into several requests, in order`.
 */
export function perRequestLimit(max: number, what: 'events' | 'messages'): string {
  return overLimitMessage('at most', {
    max,
    unit: `${what} per request`,
    setting: 'MAX_EVENTS_PER_REQUEST',
    remedy: `split the ${what} into several requests, in order`,
  });
}

/** Builds the schemas for the given limits. */
export function requestSchemas(config: Pick<ServiceConfig, 'maxEventsPerRequest' | 'maxTextLength'>) {
  const textOf = (params?: { error: (iss: { input?: unknown }) => string | undefined }) =>
    z
      .string(params)
      // zod counts string lengths in Unicode code points, the unit of every length limit of the API.
      .max(config.maxTextLength, {
        message: overLimitMessage('is longer than', {
          max: config.maxTextLength,
          unit: LENGTH_UNIT,
          setting: 'MAX_TEXT_LENGTH',
          remedy: 'shorten it, or split a long text across several events',
        }),
      })
      .refine((s) => !hasLoneSurrogate(s), { message: 'contains a lone UTF-16 surrogate; send valid Unicode' });
  const text = textOf();
  // A message text that is present must say something: null is how an assistant event says "no text".
  // User and system events need text: "" and null are one mistake, one message (the document shows a non-empty string).
  const needsTextMessage = "must be a non-empty string: user and system events need text (only an assistant event's text may be null)";
  // Text that shows nothing is no text either (newcomer ncfresh70 F1: a system message of U+200B replaced the instructions).
  const showsSomething = (s: string) => s === '' || !showsNothing(s);
  const nonEmptyText = textOf({ error: (iss) => (iss.input === null ? needsTextMessage : undefined) })
    .pipe(
      z
        .string()
        .min(1, { message: needsTextMessage })
        .refine(showsSomething, { message: blankTextRefusal('user and system events need text a model can read') }),
    )
    .meta({ minLength: 1, description: `a non-empty string that shows something (not ${SHOWS_NOTHING_DESCRIPTION}): user and system events need text` });
  // A text refused when empty: the document shows it with minLength 1 (a pipe's JSON Schema is its input's, the text).
  const nonEmpty = (message: string) => text.pipe(z.string().min(1, { message })).meta({ minLength: 1 });
  /** A text refused when empty (`message`) or when it shows nothing (`is blank …: ` and `why`). */
  const showing = (message: string, why: string) =>
    text
      .pipe(
        z
          .string()
          .min(1, { message })
          .refine(showsSomething, { message: blankTextRefusal(why) }),
      )
      .meta({ minLength: 1 });
  const summaryText = showing('must be a non-empty string: a summary needs text', 'a summary needs text a model can read');
  const id = clientId;
  const common = {
    id: id.optional(),
    createdAt: clientDateTime(() => 'must be an ISO-8601 date-time such as 2026-01-31T12:00:00Z').optional(),
    // z.unknown keeps the client's object itself: a record schema would copy it and lose a
    // `__proto__` key (JSON.parse makes it an own property; an assignment does not).
    metadata: z
      .unknown()
      .superRefine((m, ctx) => {
        if (m === null || typeof m !== 'object' || Array.isArray(m)) return ctx.addIssue({ code: 'custom', message: 'must be a JSON object' });
        // Walked once, before serialising: a very deep value would overflow the stack, a very large one (300,000 keys) cost a pass over it all.
        const scan = scanJsonValue(m, MAX_METADATA_DEPTH, MAX_METADATA_LENGTH);
        if (scan.exceeded === 'depth')
          return ctx.addIssue({
            code: 'custom',
            message: overLimitMessage('nests deeper than', { max: MAX_METADATA_DEPTH, unit: 'levels', remedy: 'flatten it' }),
          });
        const json = scan.exceeded === 'length' ? undefined : JSON.stringify(m);
        if (json === undefined || (json.length > MAX_METADATA_LENGTH && codePointLength(json) > MAX_METADATA_LENGTH))
          return ctx.addIssue({
            code: 'custom',
            message: overLimitMessage('is larger than', {
              max: MAX_METADATA_LENGTH,
              unit: `${LENGTH_UNIT} of JSON`,
              remedy: 'keep large data elsewhere and put a reference to it in metadata',
            }),
          });
        // JSON.stringify writes a lone surrogate as an escape (\udXXX): without "\ud" in its text there is none (with it, an escaped backslash may be before "ud").
        if (json.includes('\\ud') && jsonHasLoneSurrogate(m))
          return ctx.addIssue({ code: 'custom', message: 'contains a lone UTF-16 surrogate; send valid Unicode' });
        // A number a double does not hold as sent would be stored changed (and a resend with another one taken for a retry).
        const inexact = scan.inexactNumber ? inexactJsonNumberAt(m) : undefined;
        if (inexact) return ctx.addIssue({ code: 'custom', message: INEXACT_JSON_NUMBER_RULE, path: inexact });
        // Valid, and kept as sent: the store and the projector write this text rather than serialize it again (nor add up its strings).
        rememberJsonText(m, json, scan.stringUnits);
      })
      .transform((m) => m as Record<string, unknown>)
      .meta({
        type: 'object',
        additionalProperties: {},
        description: `any JSON object, at most ${MAX_METADATA_DEPTH} levels deep and ${MAX_METADATA_LENGTH} ${LENGTH_UNIT} of JSON; stored as sent (returned in the log, not the window), its numbers as IEEE-754 doubles: a number that is not finite, or an integer past ±${MAX_EXACT_JSON_INTEGER} (2^53 − 1), is refused (400 validation_failed naming it): send big integers as strings`,
      })
      .optional(),
  };
  // Kept only to render a message as it came in (OpenAI `name` and text parts).
  const name = nonEmpty('must not be empty: leave it out when the message has no name');
  const parts = z.array(text).min(1, { message: 'must hold at least one part' }).max(1024);
  const asSent = { name: name.optional(), textParts: parts.optional() };
  const partsMatch = (e: { text?: string | null; textParts?: string[] }) => e.textParts === undefined || e.textParts.join('') === e.text;
  const partsMessage = { message: 'textParts must concatenate to text (leave textParts out unless the text was sent in parts)', path: ['textParts'] };
  const toolCall = z.strictObject({ id, name: nonEmpty('must not be empty'), arguments: text });
  const toolResponse = z
    .strictObject({ toolCallId: id, name: text, data: text, dataParts: parts.optional() })
    .refine((r) => r.dataParts === undefined || r.dataParts.join('') === r.data, {
      message: 'dataParts must concatenate to data (leave dataParts out unless the result was sent in parts)',
      path: ['dataParts'],
    });
  // A user or system message has text in every provider's format (OpenAI's content is required): null would come back as "" under
  // format=openai, which is refused on the way in, so it is refused here too (only assistant text may be null).
  const user = z.strictObject({ ...common, ...asSent, type: z.literal('user'), text: nonEmptyText }).refine(partsMatch, partsMessage);
  const system = z
    .strictObject({
      ...common,
      ...asSent,
      type: z.literal('system'),
      text: nonEmptyText,
      notice: z.boolean({ error: 'must be true (a notice, DESIGN §3.1) or false' }).optional(),
    })
    .refine(partsMatch, partsMessage);
  const assistant = z
    .strictObject({
      ...common,
      ...asSent,
      type: z.literal('assistant'),
      text: text.nullable().optional(),
      toolCalls: z
        .array(toolCall)
        .max(MAX_TOOL_CALLS_PER_EVENT, {
          message: overLimitMessage('must hold at most', {
            max: MAX_TOOL_CALLS_PER_EVENT,
            unit: 'tool calls',
            remedy: 'the most one assistant event may make',
          }),
        })
        .optional(),
      refusal: nonEmpty('must not be empty: leave it out when there is no refusal').optional(),
    })
    // An assistant message must say something: text, a tool call or a refusal. `text: null`
    // says "no text" explicitly, which is valid next to tool calls or a refusal only (stricter
    // providers reject an assistant message with neither content nor tool calls).
    .refine((a) => (typeof a.text === 'string' && a.text !== '') || (a.toolCalls?.length ?? 0) > 0 || a.refusal !== undefined, {
      message: 'an assistant event needs text, at least one tool call, or a refusal (text null says it has no text)',
    })
    .refine(partsMatch, partsMessage);
  const responsesShape = 'an array of tool results [{"toolCallId", "name", "data"}] (toolCallId: the id of the assistant tool call answered)';
  const responses = z
    .array(toolResponse, { error: (iss) => (iss.input === undefined ? `is required: ${responsesShape}` : `must be ${responsesShape}`) })
    .min(1, { message: 'must hold at least one response: { toolCallId, name, data }' })
    .max(MAX_RESPONSES_PER_EVENT, {
      message: overLimitMessage('must hold at most', { max: MAX_RESPONSES_PER_EVENT, unit: 'responses', remedy: 'send more in further tool events' }),
    });
  const tool = z.strictObject({ ...common, type: z.literal('tool'), responses, name: name.optional() });
  // A summary is shown to a model as its shadow prompt's user message, then its text (DESIGN §3.1): an empty prompt would be
  // an empty user message, which `/messages` refuses and providers may too (newcomer ncapi66 F5).
  const shadowPrompt = showing(
    'must be a non-empty string: a summary is shown to the model as this user message, then its text (DESIGN §3.1), and a user message needs text',
    'a summary is shown to the model as this user message, then its text (DESIGN §3.1), and a user message needs text a model can read',
  );
  const summary = z.strictObject({ ...common, type: z.literal('summary'), shadowPrompt, text: summaryText });
  const nativeEvent = z.discriminatedUnion('type', [user, assistant, tool, system, summary], {
    // A non-object (null, a string, an array) has no type to be wrong: say what an event is.
    error: (iss) =>
      (iss as { code: string }).code === 'invalid_type'
        ? 'must be an object: an event such as {"type": "user", "text": "…"} (type one of user, assistant, tool, system, summary)'
        : 'must be one of user, assistant, tool, system, summary',
  });
  const revisionMessage = {
    error: (iss: { input?: unknown }) =>
      iss.input === null
        ? EXPECTED_REVISION_NULL
        : typeof iss.input === 'number' && revisionNumberOutOfRange(iss.input)
          ? EXPECTED_REVISION_OUT_OF_RANGE
          : typeof iss.input === 'number' && iss.input > Number.MAX_SAFE_INTEGER
            ? expectedRevisionImprecise(iss.input)
            : EXPECTED_REVISION_RULE,
  };
  const expectedRevision = z.union(
    [
      z.enum(['any', 'no_stream', 'stream_exists'], revisionMessage),
      z.number(revisionMessage).int(revisionMessage).min(0, revisionMessage).max(Number.MAX_SAFE_INTEGER, revisionMessage),
      z
        .string(revisionMessage)
        .refine((s) => parseCanonicalInteger(s) !== null, revisionMessage)
        // The document bounds it as the query revisions: 0 to the largest revision, in its digits at most.
        .meta({ pattern: decimalRangePattern(0n, MAX_REVISION), maxLength: String(MAX_REVISION).length }),
    ],
    revisionMessage,
  );
  const userId = clientId.describe(
    'the user the session belongs to: the first append that names one makes it the owner; another one is refused (409 user_id_conflict)',
  );
  // null is refused for expectedRevision (EXPECTED_REVISION_NULL); every other optional body field sent null is absent.
  const appendExpectedRevision = expectedRevision.optional();
  NULL_REFUSED_FIELDS.add(appendExpectedRevision);
  const appendEvents = z.strictObject({
    events: z
      .array(nativeEvent)
      .min(1, { message: 'send at least one event' })
      .max(config.maxEventsPerRequest, { message: perRequestLimit(config.maxEventsPerRequest, 'events') }),
    expectedRevision: appendExpectedRevision,
    userId: userId.optional(),
  });
  const appendMessages = z.strictObject({
    messages: z
      .array(z.unknown())
      .min(1, { message: 'send at least one message' })
      .max(config.maxEventsPerRequest, { message: perRequestLimit(config.maxEventsPerRequest, 'messages') }),
    expectedRevision: appendExpectedRevision,
    userId: userId.optional(),
  });
  const estimator = z.enum(['cl100k_base', 'o200k_base', 'chars'], { error: 'must be cl100k_base, o200k_base or chars' });
  const compact = z.strictObject({
    // absent or null: the session's stored policy (compactCommandFrom)
    strategy: z.unknown().optional(),
    trigger: z.unknown().optional(),
    estimator: estimator.optional(),
    dryRun: z.boolean().optional(),
  });
  const revisionParam = revisionText();
  const policyExpectedRevision = expectedRevision
    .describe(
      'the precondition, as on appends: the revision of the session\'s last event the client saw (compaction decisions after it do not count; another writer\'s event after it answers 409 wrong_expected_revision; a resend of the PUT that was written at it answers that PUT\'s policy event), or "no_stream", "stream_exists", "any" (no check, the same as leaving it out); null is refused. Not the read-only revision, which is ignored',
    )
    .optional();
  NULL_REFUSED_FIELDS.add(policyExpectedRevision);
  // The policy as GET …/policy answers it (PolicyAnswer), so an answer can be sent back as it is:
  // its read-only fields are accepted (in their answer's format) and ignored (sessionId: the path's).
  const readOnly = 'read-only (as GET …/policy answers it): accepted so that an answer can be sent back, and ignored';
  const policy = z.strictObject({
    strategy: z.unknown(),
    trigger: z.unknown().optional(),
    estimator: estimator.optional(),
    sessionId: z
      .string()
      // Only the path's session is accepted, so only a session id (the document shows its rule).
      .meta({ pattern: SESSION_ID_PATTERN.source, minLength: 1, maxLength: 128 })
      .describe('read-only: when sent, the session of the path (else 400 invalid_parameter)')
      .optional(),
    setAt: clientDateTime(() => 'must be an ISO-8601 date-time (it is read-only: leave it out or send it as answered)')
      .describe(readOnly)
      .optional(),
    revision: revisionParam.describe(`${readOnly}: no precondition (a stale revision is taken as well); send expectedRevision for one`).optional(),
    position: revisionParam.describe(readOnly).optional(),
    // Who wrote the policy event in force, as answered (null counts as absent): the event a PUT writes names its own sender.
    requestedBy: z
      .strictObject({
        keyLabel: z.string().optional(),
        requestId: z.string().optional(),
        requestIdFrom: z.enum(['client', 'service']).optional(),
        via: z.enum(['http', 'nats']),
      })
      .describe(`${readOnly}: the policy event this PUT writes records who sent this request, whatever this field says`)
      .optional(),
    expectedRevision: policyExpectedRevision,
  });
  const minPosition = revisionParam.describe(
    "global log position (from an append, compaction or policy answer) to wait for, e.g. a write made through another replica; without it a read waits for this service's own acknowledged writes; 0 waits for nothing",
  );
  const windowQuery = z
    .strictObject({
      atRevision: revisionParam
        .describe(
          "time travel: the window right after this revision of the session, computed from the log (from the session's first revision to its last, else 400 revision_out_of_range). A revision inside one atomic decision (a compaction's events before its CompactionCompleted or CompactionFailed; a late tool answer before the on-arrival EventsArchived of its append) answers the window after the whole decision: the answer's revision says which revision is shown",
        )
        .optional(),
      minPosition: minPosition.optional(),
      format: z
        .enum(['events', 'openai'], { error: 'must be events or openai' })
        .describe('events (default): native session events; openai: OpenAI chat messages, ready to send to the model')
        .optional(),
      estimator: estimator
        .describe("the tokenizer that counts the window's tokens: cl100k_base (default, whatever the session policy's estimator), o200k_base or chars")
        .optional(),
      atTime: dateTimeParam()
        .describe(
          "time travel by time: the window right after the last event the store recorded at or before this time (ISO-8601, e.g. 2026-01-31T12:00:00Z; an offset's + sent as %2B), as atRevision of that event's revision answers it; the answer's resolved names that event (revision, recordedAt). A time before the session's first event: 400 time_out_of_range; at or after its last: the current window. Not with atRevision",
        )
        .optional(),
    })
    .refine((q) => q.atTime === undefined || q.atRevision === undefined, { message: WINDOW_AT_BOTH, path: ['atTime'] });
  const logQuery = z.strictObject({
    fromRevision: revisionParam.describe("the first revision of the page (default 0): a previous page's nextRevision").optional(),
    limit: integerInRange(1n, 1000n).describe('events per page: 1 to 1000 (default 100)').optional(),
    minPosition: minPosition.optional(),
  });
  const recallQuery = z
    .strictObject({
      // Every problem with q's value is invalid_query (see recallController), as the read side answers.
      q: z
        .string({ error: (iss) => (iss.input === undefined ? `is required: ${RECALL_QUERY_BLANK}` : 'must be a string') })
        .min(1, { message: RECALL_QUERY_BLANK })
        .max(MAX_RECALL_QUERY_LENGTH, { message: RECALL_QUERY_TOO_LONG })
        .refine((s) => s.trim() !== '', { message: RECALL_QUERY_BLANK })
        .describe(
          `the words to search for, every one must occur: 1 to ${MAX_RECALL_QUERY_LENGTH} ${LENGTH_UNIT}; a word is searched when it holds a letter, a digit or an emoji (a whole grapheme cluster: flags, keycaps such as #️⃣, subdivision flags, ZWJ sequences), others are not searched`,
        ),
      sessionId: identityFilter(
        z
          .string()
          .regex(SESSION_ID_PATTERN, { error: (iss) => sessionIdProblem(String(iss.input)) })
          .describe(
            'only hits of this session (an id: 1 to 128 ASCII letters, digits or _ - : @ .); the first hit is then where the session first said the words (firstMention: true)',
          )
          .optional(),
        { give: 'a session id', without: 'search every session of the tenant' },
      ),
      userId: identityFilter(userId.describe('only hits of the sessions this user owns (the userId their appends named)').optional(), {
        give: 'a user id',
        without: 'search the sessions of every user of the tenant',
      }),
      type: z
        .enum(['user', 'assistant', 'tool', 'system', 'summary'], { error: 'must be one of user, assistant, tool, system, summary' })
        .describe("only events of this kind (DESIGN §5's kind filter; an event's type): user, assistant, tool, system or summary")
        .optional(),
      archived: booleanQueryParam().describe('true: only events a compaction archived; false: only events still in the active window; absent: both').optional(),
      compactionId: identityFilter(
        z
          .string()
          .regex(COMPACTION_ID_PATTERN, { message: COMPACTION_ID_RULE })
          .describe('only events archived by this compaction: its id (a UUID), as a compaction answer, the compaction history or a hit gives it')
          .optional(),
        { give: 'a compaction id (a UUID)', without: 'search events whichever compaction archived them, if any' },
      ),
      from: dateTimeParam()
        .describe(
          "only events created at or after this time (ISO-8601, e.g. 2026-01-31T12:00:00Z; an offset's + sent as %2B): an event's createdAt, else when it was appended",
        )
        .optional(),
      to: dateTimeParam().describe("only events created before this time (ISO-8601; an offset's + sent as %2B; after from)").optional(),
      limit: integerInRange(1n, 100n).describe('hits per page: 1 to 100 (default 20)').optional(),
      cursor: z
        .string()
        .max(MAX_RECALL_CURSOR_LENGTH, { message: 'is not a cursor; pass the nextCursor of the previous page unchanged, with the same q and filters' })
        .describe(
          "the next page: the previous page's nextCursor, unchanged, sent with the same q and filters (absent or empty: the first page). The pages of one first page's cursors are the hits as of that first page, each once, in its order; events appended since are left to a new search",
        )
        .optional(),
      minPosition: minPosition.optional(),
    })
    .refine(...orderedTimeRange('from', 'to'));
  return { nativeEvent, appendEvents, appendMessages, compact, policy, windowQuery, logQuery, recallQuery };
}

/** The 400 message (`validation_failed`, parameter `atTime`) for a window asked with both `atTime` and `atRevision`. */
export const WINDOW_AT_BOTH =
  'give atRevision or atTime, not both: atRevision=N answers the window right after revision N, atTime=T the window right after the last event recorded at or before T (its revision is in the answer)';

/** The schemas built by {@link requestSchemas}. */
export type RequestSchemas = ReturnType<typeof requestSchemas>;
/** A validated native event. */
export type NativeEventInput = z.infer<RequestSchemas['nativeEvent']>;
