/**
 * The summarizer spend of a pass (./summarizer-spend): no call is lost between `used` and
 * `discarded`, and a decision's `summarizer` sums its reply and the discarded calls.
 */
import fc from 'fast-check';
import type { SummarizerOutcome, SummarizerUsage } from '../summarizers/summarizer';
import {
  addSummarizerUsage,
  answeredModelName,
  decisionSummarizer,
  discardedSummarizerCalls,
  MAX_ANSWERED_MODEL_LENGTH,
  MAX_ANSWERED_MODELS,
  mergeAnsweredModels,
  SummarizerSpend,
  usageOf,
} from './summarizer-spend';

// retries / unreportedUsageCalls may be absent (a summarizer that does not count them, an older decision): read as 0
const usageArb: fc.Arbitrary<SummarizerUsage> = fc.record(
  { calls: fc.nat(5), promptTokens: fc.nat(100_000), completionTokens: fc.nat(10_000), retries: fc.nat(3), unreportedUsageCalls: fc.nat(3) },
  { requiredKeys: ['calls', 'promptTokens', 'completionTokens'] },
);
const outcomeArb: fc.Arbitrary<SummarizerOutcome> = fc.oneof(
  usageArb.map((u) => ({ ok: true as const, text: 'recap', ...u })),
  usageArb.map((u) => ({ ok: false as const, reason: 'HTTP 500', ...u })),
);
type Step = { kind: 'called'; outcome: SummarizerOutcome } | { kind: 'discard' } | { kind: 'use' };
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  outcomeArb.map((outcome) => ({ kind: 'called' as const, outcome })),
  fc.constant({ kind: 'discard' as const }),
  fc.constant({ kind: 'use' as const }),
);
const identity = { kind: 'openai-compatible' as const, model: 'm' };

describe('summarizer spend of a pass', () => {
  it('every call made ends up used or discarded, exactly once (property)', () => {
    fc.assert(
      fc.property(fc.array(stepArb, { maxLength: 20 }), (steps) => {
        const spend = new SummarizerSpend();
        let made: SummarizerUsage | undefined;
        for (const step of steps) {
          if (step.kind === 'called') {
            spend.called(step.outcome);
            made = addSummarizerUsage(made, step.outcome);
          } else if (step.kind === 'discard') spend.discardPending();
          else spend.usePending();
        }
        // however the pass ends, what is still pending is not in a decision
        spend.discardPending();
        expect(addSummarizerUsage(spend.used, spend.discarded)).toEqual(made && usageOf(made));
      }),
    );
  });

  it("a decision's summarizer sums its reply and the discarded calls, the discarded part named (property)", () => {
    fc.assert(
      fc.property(fc.option(usageArb, { nil: undefined }), fc.option(usageArb, { nil: undefined }), (reply, discarded) => {
        const recorded = decisionSummarizer(identity, reply, discarded);
        if (!reply && !discarded) return expect(recorded).toBeUndefined();
        expect(recorded).toEqual({ ...identity, ...addSummarizerUsage(reply, discarded), ...(discarded ? { discarded: usageOf(discarded) } : {}) });
        expect(discardedSummarizerCalls(identity, discarded)).toEqual(discarded ? { ...identity, ...usageOf(discarded) } : undefined);
      }),
    );
  });

  it('a reply still pending when another call is made is discarded', () => {
    const spend = new SummarizerSpend();
    spend.called({ ok: true, text: 'a', calls: 1, promptTokens: 10, completionTokens: 1 });
    spend.called({ ok: true, text: 'b', calls: 2, promptTokens: 20, completionTokens: 2 });
    spend.usePending();
    expect(spend.discarded).toEqual({ calls: 1, promptTokens: 10, completionTokens: 1, retries: 0, unreportedUsageCalls: 0, answeredModels: [] });
    expect(spend.used).toEqual({ calls: 2, promptTokens: 20, completionTokens: 2, retries: 0, unreportedUsageCalls: 0, answeredModels: [] });
  });
});

describe('answered model names (ncsummarizer A1)', () => {
  const wellFormed = (text: string) => !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text);

  it('any value reads as null or one line of valid Unicode text, not blank, at most the length cap and its marker (property)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.anything(), fc.string({ unit: 'binary', maxLength: 600 }), fc.string({ unit: 'grapheme', maxLength: 300 })), (value) => {
        const name = answeredModelName(value);
        if (typeof value !== 'string' || value.trim() === '') return expect(name).toBeNull();
        expect(name).not.toBeNull();
        expect(name!.trim()).toBe(name);
        expect(name).not.toBe('');
        expect(wellFormed(name!)).toBe(true);
        expect(name).not.toMatch(/[\u0000-\u001F\u007F]/);
        expect(Array.from(name!).length).toBeLessThanOrEqual(MAX_ANSWERED_MODEL_LENGTH + 1);
      }),
    );
  });

  it('a name of valid one-line text within the cap is kept as sent, trimmed; a longer one keeps its first 200 characters and says it was cut', () => {
    expect(answeredModelName('gpt-4o-2024-08-06')).toBe('gpt-4o-2024-08-06');
    expect(answeredModelName(' accounts/fireworks/models/llama-v3p1-8b-instruct ')).toBe('accounts/fireworks/models/llama-v3p1-8b-instruct');
    const emoji = '🙂'.repeat(MAX_ANSWERED_MODEL_LENGTH);
    expect(answeredModelName(emoji)).toBe(emoji);
    expect(answeredModelName(emoji + 'x')).toBe(emoji + '…');
    expect(answeredModelName(42)).toBeNull();
    expect(answeredModelName(null)).toBeNull();
  });

  it('names add up distinct, first seen first, at most the cap, whatever the order of additions (property)', () => {
    const names = fc.array(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'), { maxLength: 12 });
    fc.assert(
      fc.property(names, names, (x, y) => {
        const a = mergeAnsweredModels([], x);
        const merged = mergeAnsweredModels(a, y);
        expect(new Set(merged).size).toBe(merged.length);
        expect(merged.length).toBeLessThanOrEqual(MAX_ANSWERED_MODELS);
        expect(merged.slice(0, a.length)).toEqual(a);
        expect(merged).toEqual([...new Set([...x, ...y])].slice(0, MAX_ANSWERED_MODELS));
      }),
    );
  });

  it("a decision's summarizer names the models of its reply and of its discarded calls, the discarded part its own", () => {
    const reply = { calls: 1, promptTokens: 10, completionTokens: 1, answeredModels: ['gpt-4o-2024-08-06'] };
    const discarded = { calls: 1, promptTokens: 10, completionTokens: 1, answeredModels: ['gpt-4o-2024-05-13'] };
    expect(decisionSummarizer({ kind: 'openai-compatible', model: 'gpt-4o' }, reply, discarded)).toMatchObject({
      model: 'gpt-4o',
      answeredModels: ['gpt-4o-2024-08-06', 'gpt-4o-2024-05-13'],
      discarded: { answeredModels: ['gpt-4o-2024-05-13'] },
    });
  });
});
