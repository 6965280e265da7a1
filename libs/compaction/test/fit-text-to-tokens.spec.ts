/**
 * `fitTextToTokens` (DESIGN §3.7): the middle-truncation keeping the most text that fits a budget,
 * found with work bounded by the answer rather than by the text (issue 17, item 1).
 */
import fc from 'fast-check';
import { cutMiddle, fitTextToTokens, getEstimator, type TokenEstimator } from '../src';
import { OMISSION_MARKER } from '../src/text';

/** The largest n in [0, max] with `fits(n)`, by plain bisection (`fits(0)` assumed). */
function bisect(max: number, fits: (n: number) => boolean): number {
  let lo = 0;
  let hi = max;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The plain search over every amount of text kept (the definition): the most content whose cut fits, by bisection. */
function longestFittingByBisection(text: string, maxTokens: number, estimator: TokenEstimator): string {
  if (estimator.count(text) <= maxTokens) return text;
  return cutMiddle(
    text,
    bisect(text.length - 1, (k) => estimator.count(cutMiddle(text, k)) <= maxTokens),
  );
}

/** Code units of `text` outside omission markers. */
const content = (text: string) => text.replace(OMISSION_MARKER, '').length;

/** `estimator`, also adding up the UTF-16 code units it was asked to count. */
function metered(estimator: TokenEstimator): TokenEstimator & { units: number } {
  const m = { name: estimator.name, units: 0, count: (t: string) => ((m.units += t.length), estimator.count(t)) };
  return m;
}

const pieces = ['word ', 'token', '漢字', '😀', '12345', '\n', '    ', 'QUJD+/==', 'é'];
const textArb = fc.array(fc.constantFrom(...pieces), { maxLength: 400 }).map((p) => p.join(''));

describe('fitTextToTokens', () => {
  // Budgets that hold the omission marker: below it a truncation is a bare prefix, cheaper than a
  // longer one with the marker, and the two searches may stop on different sides of that dip.
  it.each(['cl100k_base', 'chars'] as const)('returns what a bisection over every kept length returns (%s)', (name) => {
    const estimator = getEstimator(name);
    fc.assert(
      fc.property(textArb, fc.integer({ min: 40, max: 300 }), (text, maxTokens) => {
        expect(fitTextToTokens(text, maxTokens, estimator)).toBe(longestFittingByBisection(text, maxTokens, estimator));
      }),
      { numRuns: 200 },
    );
  });

  it.each([
    ['one letter', 'a'.repeat(200_000)],
    ['ideographs', '漢字の'.repeat(66_667)],
    ['emoji', '😀'.repeat(100_000)],
  ])('cuts a 200,000-unit text (%s) to 1,000 tokens counting it once plus O(answer · log answer)', (_, text) => {
    const estimator = metered(getEstimator('cl100k_base'));
    const fitted = fitTextToTokens(text, 1000, estimator);
    expect(getEstimator('cl100k_base').count(fitted)).toBeLessThanOrEqual(1000);
    expect(fitted.length).toBeGreaterThan(100);
    // One full count, then truncations at most about twice as long as the answer, log2(answer) of
    // them (a bisection from the middle would read n/2 + n/4 + … ≈ n more, whatever the answer).
    const answer = fitted.length;
    expect(estimator.units - text.length).toBeLessThanOrEqual(3 * answer * Math.ceil(Math.log2(answer)));
  });

  // CI counterexample (summary-budget property): a 55-unit, 41-token text cut to 40 tokens kept 19
  // units, as a bound on the result's length leaves only the length minus the marker (~30 units)
  it('keeps nearly all of a token-dense text barely over its budget (the marker longer in code units than what it replaces)', () => {
    const estimator = getEstimator('cl100k_base');
    const text = 'User: 0a0aA0A0a\nUser: 0A0 🙂 aeaA0 0a0A0 A 出発 A {"k":1}';
    const budget = estimator.count(text) - 1;
    const fitted = fitTextToTokens(text, budget, estimator, { atWords: true });
    expect(estimator.count(fitted)).toBeLessThanOrEqual(budget);
    expect(content(fitted)).toBeGreaterThanOrEqual(text.length - 16);
    expect(fitted).toMatch(/^User: 0a0aA0A0a\n/);
  });
});
