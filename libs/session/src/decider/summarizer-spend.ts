/**
 * What a compaction pass spent on the summarizer, and where it shows (DESIGN §3.7, §4: a decision
 * records the summarizer's identity and token usage). A pass may call the summarizer and then not
 * use the reply: the stream moved on and the pass could not be rebased (it is planned again, and
 * may then call again, conclude `not-triggered`/`noop`, or end in `conflict`), the session was
 * erased meanwhile, or another replica recorded the same compaction first. Such a call is
 * *discarded*; its cost still shows:
 *
 * - in the decision the pass finally writes, if it writes one: `summarizer` sums every call made
 *   for it (`calls`, `promptTokens`, `completionTokens`), and `summarizer.discarded` is the part of
 *   those figures whose replies were not used ({@link decisionSummarizer});
 * - in the answer, whatever it is: `discardedSummarizerCalls` ({@link discardedSummarizerCalls});
 * - in the metrics (`summarizer_calls_total`, `summarizer_tokens_total` by outcome and reply).
 *
 * Pure: figures in, figures out.
 */
import type { SummarizerIdentity } from '../events/session-stream-events';
import type { SummarizerIdentityInfo, SummarizerOutcome, SummarizerUsage } from '../summarizers/summarizer';

/** `a + b`, field by field (`undefined` counts as nothing; both `undefined` → `undefined`). */
export function addSummarizerUsage(a: SummarizerUsage | undefined, b: SummarizerUsage | undefined): SummarizerUsage | undefined {
  if (!a) return b && usageOf(b);
  if (!b) return usageOf(a);
  return { calls: a.calls + b.calls, promptTokens: a.promptTokens + b.promptTokens, completionTokens: a.completionTokens + b.completionTokens };
}

/** The usage figures of a summarizer outcome (or of any object carrying them), alone. */
export function usageOf(outcome: SummarizerUsage | SummarizerOutcome): SummarizerUsage {
  return { calls: outcome.calls, promptTokens: outcome.promptTokens, completionTokens: outcome.completionTokens };
}

/**
 * The `summarizer` a decision records (in `SummaryInserted`, `CompactionCompleted` and
 * `CompactionFailed` alike): `identity` with the usage of the reply the decision uses (`reply`,
 * when the pass called the summarizer for it) plus the usage of every earlier call of the pass
 * whose reply was discarded (`discarded`), and, when there was such a call, `discarded` itself
 * (a part of the totals). Undefined when the pass made no summarize call at all.
 */
export function decisionSummarizer(
  identity: SummarizerIdentityInfo,
  reply: SummarizerUsage | undefined,
  discarded: SummarizerUsage | undefined,
): SummarizerIdentity | undefined {
  const total = addSummarizerUsage(reply, discarded);
  if (!total) return undefined;
  return { kind: identity.kind, model: identity.model, ...total, ...(discarded ? { discarded: usageOf(discarded) } : {}) };
}

/**
 * The answer's `discardedSummarizerCalls`: `identity` with the usage of the summarize calls a
 * pass made whose replies went into no decision it wrote; undefined when there were none.
 */
export function discardedSummarizerCalls(identity: SummarizerIdentityInfo, discarded: SummarizerUsage | undefined): SummarizerIdentity | undefined {
  return discarded ? { kind: identity.kind, model: identity.model, ...usageOf(discarded) } : undefined;
}

/**
 * The summarizer spend of one pass while it runs (the handler's ledger): the reply of its current
 * attempt (`pending`, until it is written in a decision or thrown away), what it threw away
 * (`discarded`), and the reply its written decision used (`used`).
 */
export class SummarizerSpend {
  private pending: SummarizerUsage | undefined;
  private discardedUsage: SummarizerUsage | undefined;
  private usedUsage: SummarizerUsage | undefined;

  /** A summarize call answered with `outcome` (its reply is pending); a reply still pending is discarded first. */
  called(outcome: SummarizerOutcome): void {
    this.discardPending();
    this.pending = usageOf(outcome);
  }

  /** The pending reply (if any) will not be used: the pass planned again, met another decision, or ended without writing. */
  discardPending(): void {
    this.discardedUsage = addSummarizerUsage(this.discardedUsage, this.pending);
    this.pending = undefined;
  }

  /** The pending reply (if any) was written in the pass's decision. */
  usePending(): void {
    this.usedUsage = addSummarizerUsage(this.usedUsage, this.pending);
    this.pending = undefined;
  }

  /** Usage of the calls discarded so far (the pending reply not included); undefined when none. */
  get discarded(): SummarizerUsage | undefined {
    return this.discardedUsage;
  }

  /** Usage of the reply the written decision used; undefined when none. */
  get used(): SummarizerUsage | undefined {
    return this.usedUsage;
  }
}
