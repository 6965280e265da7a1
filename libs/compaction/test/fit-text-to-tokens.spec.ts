/**
 * `fitTextToTokens` (DESIGN §3.7): the longest middle-truncation that fits a budget, found with
 * work bounded by the answer rather than by the text (issue 17, item 1).
 */
import fc from 'fast-check';
import { fitTextToTokens, getEstimator, truncateMiddle, type TokenEstimator } from '../src';

/** The plain search over every kept length (the definition): longest `k` whose truncation fits, by bisection. */
function longestFittingByBisection(text: string, maxTokens: number, estimator: TokenEstimator): string {
  if (estimator.count(text) <= maxTokens) return text;
  let lo = 0;
  let hi = text.length - 1;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (estimator.count(truncateMiddle(text, mid)) <= maxTokens) lo = mid;
    else hi = mid - 1;
  }
  return truncateMiddle(text, lo);
}

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
});
