/**
 * JSON Schema `pattern`s that state a numeric range in text, for the OpenAPI document: a query
 * parameter (`limit`, a revision) arrives as text, and JSON Schema's `minimum`/`maximum` do not
 * apply to strings. Only the document reads them; the service reads the values with
 * `parseCanonicalInteger`, which they agree with.
 */

/** Digit strings of one length `lo.length` from `lo` to `hi` (equal lengths, `lo` ≤ `hi`), as regex alternatives (no anchors). */
function sameLengthRange(lo: string, hi: string): string[] {
  if (lo.length === 0) return [''];
  if (lo === hi) return [lo];
  const rest = lo.length - 1;
  const anyRest = rest === 0 ? '' : rest === 1 ? '[0-9]' : `[0-9]{${rest}}`;
  const [l, h] = [Number(lo[0]), Number(hi[0])];
  if (l === h) return sameLengthRange(lo.slice(1), hi.slice(1)).map((tail) => `${lo[0]}${tail}`);
  const alternatives: string[] = [];
  // From lo up to the end of its leading digit, the whole leading digits between, then up to hi.
  const loFull = /^0*$/.test(lo.slice(1));
  const hiFull = /^9*$/.test(hi.slice(1));
  const first = loFull ? l : l + 1;
  const last = hiFull ? h : h - 1;
  if (!loFull) alternatives.push(...sameLengthRange(lo.slice(1), '9'.repeat(rest)).map((tail) => `${lo[0]}${tail}`));
  if (first <= last) alternatives.push(`${first === last ? String(first) : `[${first}-${last}]`}${anyRest}`);
  if (!hiFull) alternatives.push(...sameLengthRange('0'.repeat(rest), hi.slice(1)).map((tail) => `${hi[0]}${tail}`));
  return alternatives;
}

/**
 * The `pattern` of the integers from `min` to `max` (0 ≤ `min` ≤ `max`) written in canonical
 * decimal digits (no sign, no leading zeros: `CANONICAL_DECIMAL_PATTERN`'s spelling), e.g. 1 to
 * 100 → `^(?:[1-9]|[1-9][0-9]|100)$`; 0 to 2^63 − 1 refuses `9223372036854775808`. Digits are
 * written `[0-9]` (a `\d` matches other digits in some regex dialects).
 * @throws RangeError when `min` is negative or above `max`.
 */
export function decimalRangePattern(min: bigint, max: bigint): string {
  if (min < 0n || min > max) throw new RangeError(`decimalRangePattern: no range from ${min} to ${max}`);
  const alternatives: string[] = [];
  const [minLength, maxLength] = [String(min).length, String(max).length];
  // Lengths whose every canonical number is in range: one alternative for all of them.
  let fullFrom: number | undefined;
  const flushFull = (to: number) => {
    if (fullFrom === undefined) return;
    const [a, b] = [fullFrom - 1, to - 1];
    alternatives.push(`[1-9]${b === 0 ? '' : a === b ? (a === 1 ? '[0-9]' : `[0-9]{${a}}`) : `[0-9]{${a},${b}}`}`);
    fullFrom = undefined;
  };
  for (let length = minLength; length <= maxLength; length++) {
    const lo = length === minLength ? String(min) : `1${'0'.repeat(length - 1)}`;
    const hi = length === maxLength ? String(max) : '9'.repeat(length);
    const full = length > 1 && lo === `1${'0'.repeat(length - 1)}` && hi === '9'.repeat(length);
    if (full) {
      fullFrom ??= length;
      continue;
    }
    flushFull(length - 1);
    alternatives.push(...sameLengthRange(lo, hi));
  }
  flushFull(maxLength);
  return `^(?:${alternatives.join('|')})$`;
}
