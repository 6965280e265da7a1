/**
 * The longest text an event may hold (`MAX_TEXT_LENGTH`, characters = Unicode code points) bounds
 * summaries too (DESIGN §3.7): `replyLengthRefusal` is the rule every pass applies to a summarizer's
 * text, and the extractive summary given that bound (`maxLength`) never exceeds it.
 */
import fc from 'fast-check';
import {
  codePointLength,
  DEFAULT_EXTRACTIVE_MAX_CHARS,
  extractiveSummary,
  getEstimator,
  replyLengthRefusal,
  type EstimatorName,
  type SummaryRequest,
} from '../src';

describe('replyLengthRefusal', () => {
  it('accepts a text of exactly the bound in code points (an emoji counts one) and refuses one more, naming both lengths', () => {
    const atBound = '😀'.repeat(5) + 'abcde'; // 10 code points, 15 UTF-16 code units
    expect(replyLengthRefusal(atBound, 10)).toBeUndefined();
    expect(replyLengthRefusal(`${atBound}!`, 10)).toBe('reply longer than the longest text an event may hold (11 characters, MAX_TEXT_LENGTH 10)');
    expect(replyLengthRefusal('x'.repeat(2_200_000), 1_000_000)).toBe(
      'reply longer than the longest text an event may hold (2200000 characters, MAX_TEXT_LENGTH 1000000)',
    );
  });

  it('refuses exactly the texts longer than the bound, and its reason never holds any of the text', () => {
    const text = fc.array(fc.constantFrom('a', 'Z', ' ', '😀', '\ud800', 'é', '語'), { maxLength: 60 }).map((parts) => parts.join(''));
    fc.assert(
      fc.property(text, fc.integer({ min: 1, max: 70 }), (t, bound) => {
        const reason = replyLengthRefusal(t, bound);
        expect(reason === undefined).toBe(codePointLength(t) <= bound);
        if (reason !== undefined) expect(reason).toMatch(/^reply longer than the longest text an event may hold \(\d+ characters, MAX_TEXT_LENGTH \d+\)$/);
      }),
      { numRuns: 500 },
    );
  });
});

describe('extractiveSummary with the longest text an event may hold (maxLength)', () => {
  const line = fc.oneof(
    fc.string({ maxLength: 300 }).map((s) => `User: ${s}`),
    fc.array(fc.constantFrom('order ', 'ORD-1234 ', '😀', 'https://x.io/a/b ', 'done. ', 'user_id '), { maxLength: 80 }).map((p) => `Assistant: ${p.join('')}`),
    fc.string({ unit: 'binary', maxLength: 200 }).map((s) => `Tool [responses: f -> ${s}]`),
  );
  const request = fc.record({
    toSummarize: fc.array(line, { minLength: 1, maxLength: 30 }),
    currentSummaries: fc.array(fc.string({ maxLength: 400 }), { maxLength: 2 }),
    maxSummaryTokens: fc.option(fc.integer({ min: 1, max: 5000 }), { nil: undefined }),
  });

  it('never exceeds it, with or without a summary budget, whatever the bound (1 and up)', () => {
    fc.assert(
      fc.property(
        request,
        fc.integer({ min: 1, max: 8000 }),
        fc.constantFrom<EstimatorName | undefined>(undefined, 'cl100k_base', 'chars'),
        (r, maxLength, estimator) => {
          const req: SummaryRequest = { systemPrompt: 'S', shadowPrompt: 'What happened?', overlap: [], coveredIds: [], ...r };
          const summary = extractiveSummary(req, { maxLength, ...(estimator ? { estimator: getEstimator(estimator) } : {}) });
          expect(codePointLength(summary)).toBeLessThanOrEqual(maxLength);
          expect(summary.trim()).not.toBe('');
        },
      ),
      { numRuns: 200 },
    );
  });

  it('changes nothing when the bound is above maxChars (the service default, 1,000,000)', () => {
    fc.assert(
      fc.property(request, (r) => {
        const req: SummaryRequest = { systemPrompt: 'S', shadowPrompt: 'What happened?', overlap: [], coveredIds: [], ...r };
        expect(extractiveSummary(req, { maxLength: 1_000_000 })).toBe(extractiveSummary(req));
        expect(extractiveSummary(req, { maxLength: DEFAULT_EXTRACTIVE_MAX_CHARS })).toBe(extractiveSummary(req));
      }),
      { numRuns: 100 },
    );
  });

  it('budgets its sections within a bound under maxChars instead of cutting the whole summary', () => {
    const toSummarize = Array.from({ length: 60 }, (_, i) => `User: question ${i} about order ORD-${1000 + i} and its delivery address`);
    const req: SummaryRequest = { systemPrompt: 'S', shadowPrompt: 'What happened?', currentSummaries: [], toSummarize, overlap: [], coveredIds: [] };
    expect(extractiveSummary(req).length).toBeGreaterThan(1500);
    const bounded = extractiveSummary(req, { maxLength: 1500 });
    expect(bounded.length).toBeLessThanOrEqual(1500);
    expect(bounded).toBe(extractiveSummary(req, { maxChars: 1500 }));
  });
});
