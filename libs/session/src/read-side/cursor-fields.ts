import { CANONICAL_DECIMAL_PATTERN, parseCanonicalInteger } from '@lib/event-store';
import { MAX_CURSOR_LENGTH } from './cursor-of-another-route';
import { InvalidQueryError } from './invalid-query-error';

/**
 * The one rule every paging cursor is read by (recall's, `recall-cursor`, and the lists' keyset
 * cursors, `keyset-cursor`): its text is base64url of a JSON object, at most
 * {@link MAX_CURSOR_LENGTH} characters ({@link cursorFields}); each integer field is canonical
 * decimal text in the range of the values the service writes there ({@link cursorInteger}); the
 * decoders check the type and range of every other field they read. A cursor that breaks the rule
 * is refused by its decoder, 400 `invalid_query` naming `cursor` ({@link CursorRefusals}), before
 * anything of it reaches the read models or a BigInt or Number conversion that could throw (a
 * recall position of 2^53 once reached one: 500 `internal`). Fields a decoder does not know are
 * ignored (a later build of the same format version may add one, as compaction-history cursors
 * added their session).
 */

const CANONICAL = new RegExp(CANONICAL_DECIMAL_PATTERN);
/** Longest integer text a refusal repeats (2^63 − 1 has 19 digits). */
const SHOWN_DIGITS = 20;

/**
 * The fields of a cursor's text: the JSON object its base64url text holds, or null when `text` is
 * no such thing (not a string, over {@link MAX_CURSOR_LENGTH} characters, other characters than
 * base64url's, not the canonical unpadded base64url of its bytes (e.g. a character added at its
 * end, which a decoder ignores), not a JSON object with nothing around it (white space either
 * side included). Never throws.
 */
export function cursorFields(text: unknown): Readonly<Record<string, unknown>> | null {
  if (typeof text !== 'string' || text.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(text)) return null;
  const bytes = Buffer.from(text, 'base64url');
  const json = bytes.toString('utf8');
  // Only the text the service wrote, an object's JSON with nothing around it: Node's decoder ignores a trailing character
  // that completes no byte, and one that completes a byte may add white space JSON.parse skips (newcomer ncapi73).
  if (bytes.toString('base64url') !== text || !json.startsWith('{') || !json.endsWith('}')) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return null;
  }
  return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
}

/** The two refusals of a route's cursor decoder, both 400 `invalid_query` naming `cursor` (see {@link cursorRefusals}). */
export interface CursorRefusals {
  /** A text that is no cursor (not base64url JSON, a field missing or of another type): `cursor: is not a cursor; <unchanged>`. */
  malformed(): InvalidQueryError;
  /**
   * A cursor whose fields are well-typed but hold values the service never writes there (`why`,
   * e.g. `its last position 9007199254740992 is past its paging's position (6)`): a forged
   * or damaged cursor, `cursor: is not a cursor this service made: <why>; <restart>`.
   */
  outOfRange(why: string): InvalidQueryError;
}

/**
 * The refusals of one route's cursors: `unchanged` says how a client passes a cursor (e.g. `pass
 * the nextCursor of the previous page unchanged`), `restart` how it starts the paging again (e.g.
 * `search again without cursor (the first page)`).
 */
export function cursorRefusals(unchanged: string, restart: string): CursorRefusals {
  return {
    malformed: () => new InvalidQueryError('cursor', `is not a cursor; ${unchanged}`),
    outOfRange: (why) => new InvalidQueryError('cursor', `is not a cursor this service made: ${why}; ${restart}`),
  };
}

/** The range of an integer field of a cursor (see {@link cursorInteger}). */
export interface CursorIntegerRange {
  /** What the field holds, as a refusal names it, e.g. `its last position`. */
  name: string;
  /** Smallest value the service writes there (bigint). */
  min: bigint;
  /** Largest value the service writes there (bigint, at most 2^63 − 1). */
  max: bigint;
  /** What `max` is, as a refusal names it, e.g. `its paging's position` (default `2^63 − 1`). */
  maxIs?: string;
}

/**
 * The bigint of a cursor's integer field `value`: canonical decimal text (`parseCanonicalInteger`)
 * in `range`. Never converts more than 19 digits (`parseCanonicalInteger`: nothing here can throw a RangeError).
 * @throws InvalidQueryError `refuse.malformed()` when `value` is not canonical decimal text (a
 *   JSON number, a sign, leading zeros…); `refuse.outOfRange(…)` when it is, outside `range`,
 *   naming the field, its value (up to 20 digits) and the bound it passes, e.g. `its last position
 *   100 is past its paging's position (6)`.
 */
export function cursorInteger(value: unknown, range: CursorIntegerRange, refuse: CursorRefusals): bigint {
  if (typeof value !== 'string' || !CANONICAL.test(value)) throw refuse.malformed();
  const parsed = parseCanonicalInteger(value, range.min, range.max);
  if (parsed !== null) return parsed;
  const shown = value.length <= SHOWN_DIGITS ? `${range.name} ${value}` : `${range.name} (${value.length} digits)`;
  // Canonical text of a value up to 2^63 − 1 parses (at most 19 digits); a larger one is past every bound.
  const whole = parseCanonicalInteger(value);
  const below = whole !== null && whole < range.min;
  throw refuse.outOfRange(below ? `${shown} is below ${range.min}` : `${shown} is past ${range.maxIs ?? '2^63 − 1'} (${range.max})`);
}
