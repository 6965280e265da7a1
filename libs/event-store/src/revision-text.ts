/**
 * The one rule for revisions and positions sent as text (query parameters, string
 * `expectedRevision`, cursors): canonical decimal digits only, the way the service writes them
 * (`"0"`, `"42"`), so every number has exactly one spelling and `"03"` is not a second name for 3.
 */

/** Largest revision or position (every store keeps them as signed 64-bit integers): 2^63 − 1. */
export const MAX_REVISION = 9_223_372_036_854_775_807n;

/** JSON Schema `pattern` of canonical decimal text: `0`, or a digit 1–9 followed by digits. */
export const CANONICAL_DECIMAL_PATTERN = '^(0|[1-9][0-9]*)$';

/** What to send instead of a non-canonical number, for error messages (after "must be an integer from A to B"). */
export const CANONICAL_DECIMAL_RULE = 'in plain decimal digits, without leading zeros, sign, spaces, fraction or exponent (e.g. "42")';

const CANONICAL = new RegExp(CANONICAL_DECIMAL_PATTERN);

/**
 * Parses `text` as a canonical decimal integer in `[min, max]` (default: a revision or position,
 * 0 to {@link MAX_REVISION}). Returns null for anything else: a non-string, leading zeros (`"03"`,
 * `"00"`), a sign (`"+3"`, `"-0"`), whitespace, a fraction or exponent (`"3.0"`, `"3e0"`), other
 * digits than ASCII 0–9, or a value out of range. Never throws. `String(result) === text` whenever
 * the result is not null.
 */
export function parseCanonicalInteger(text: unknown, min = 0n, max = MAX_REVISION): bigint | null {
  // Longer than max's digits cannot be in range (and keeps BigInt off huge inputs).
  if (typeof text !== 'string' || text.length > max.toString().length || !CANONICAL.test(text)) return null;
  const value = BigInt(text);
  return value >= min && value <= max ? value : null;
}
