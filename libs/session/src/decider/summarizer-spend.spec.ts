/**
 * The summarizer spend of a pass (./summarizer-spend): no call is lost between `used` and
 * `discarded`, and a decision's `summarizer` sums its reply and the discarded calls.
 */
import fc from 'fast-check';
import type { SummarizerOutcome, SummarizerUsage } from '../summarizers/summarizer';
import { addSummarizerUsage, decisionSummarizer, discardedSummarizerCalls, SummarizerSpend, usageOf } from './summarizer-spend';

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
    expect(spend.discarded).toEqual({ calls: 1, promptTokens: 10, completionTokens: 1, retries: 0, unreportedUsageCalls: 0 });
    expect(spend.used).toEqual({ calls: 2, promptTokens: 20, completionTokens: 2, retries: 0, unreportedUsageCalls: 0 });
  });
});
