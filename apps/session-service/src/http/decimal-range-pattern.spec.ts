import fc from 'fast-check';
import { MAX_REVISION, parseCanonicalInteger } from '@lib/event-store';
import { decimalRangePattern } from './decimal-range-pattern';

/** Text near the range's ends and elsewhere: canonical and not (leading zeros, signs, spaces, other digits). */
const texts = (min: bigint, max: bigint) =>
  fc.oneof(
    fc.bigInt({ min: 0n, max: max * 2n + 10n }).map(String),
    fc.bigInt({ min: -5n, max: 5n }).map((d) => String(min + d)),
    fc.bigInt({ min: -5n, max: 5n }).map((d) => String(max + d)),
    fc.bigInt({ min: 0n, max: max * 2n + 10n }).map((n) => `0${n}`),
    fc.stringMatching(/^[+ -]?[0-9٠-٩]{0,21}[ .e]?[0-9]?$/),
  );

describe('decimalRangePattern: a JSON Schema pattern of the integers of a range in canonical digits', () => {
  it.each([
    [1n, 100n],
    [1n, 1000n],
    [0n, MAX_REVISION],
    [0n, 0n],
    [7n, 12345n],
    [123n, 456n],
    [99n, 101n],
    [1009n, 9990n],
  ])('matches exactly the texts parseCanonicalInteger reads within %s to %s', (min, max) => {
    const pattern = new RegExp(decimalRangePattern(min, max), 'u');
    fc.assert(
      fc.property(texts(min, max), (text) => pattern.test(text) === (parseCanonicalInteger(text, min, max) !== null)),
      { numRuns: 3000 },
    );
  });

  it('refuses what the server refuses at the ends of the ranges the API uses', () => {
    const limit = new RegExp(decimalRangePattern(1n, 100n));
    expect(['0', '1', '100', '101', '999', '01'].map((t) => limit.test(t))).toEqual([false, true, true, false, false, false]);
    const revision = new RegExp(decimalRangePattern(0n, MAX_REVISION));
    expect(['0', '9223372036854775807', '9223372036854775808', '9999999999999999999', '10000000000000000000'].map((t) => revision.test(t))).toEqual([
      true,
      true,
      false,
      false,
      false,
    ]);
    expect(decimalRangePattern(1n, 100n)).toBe('^(?:[1-9]|[1-9][0-9]|100)$');
  });

  it('throws for a range that is none', () => {
    expect(() => decimalRangePattern(5n, 4n)).toThrow(RangeError);
    expect(() => decimalRangePattern(-1n, 4n)).toThrow(RangeError);
  });
});
