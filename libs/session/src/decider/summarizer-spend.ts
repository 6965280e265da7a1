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
  const [x, y] = [usageOf(a), usageOf(b)];
  return {
    calls: x.calls + y.calls,
    promptTokens: x.promptTokens + y.promptTokens,
    completionTokens: x.completionTokens + y.completionTokens,
    retries: x.retries + y.retries,
    unreportedUsageCalls: x.unreportedUsageCalls + y.unreportedUsageCalls,
    answeredModels: mergeAnsweredModels(x.answeredModels, y.answeredModels),
  };
}

/** The most characters (Unicode code points) of one answered model name kept; a longer one is cut there and ends with `…`. */
export const MAX_ANSWERED_MODEL_LENGTH = 200;
/** The most distinct answered model names a decision (or any usage figures) keeps: the first ones seen. */
export const MAX_ANSWERED_MODELS = 8;

/** Lone UTF-16 surrogates (not valid Unicode: no store may be asked to hold them). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
/** C0 control characters and DEL (a name is one line of text). */
const CONTROL = /[\u0000-\u001F\u007F]/g;

/**
 * The model name an endpoint's reply gave (its `model` field), as a decision records it: a string,
 * trimmed, its lone surrogates and control characters each replaced by U+FFFD, cut to
 * {@link MAX_ANSWERED_MODEL_LENGTH} code points followed by `…` when longer; null when the value
 * names no model (absent, not a string, blank). The endpoint chooses this text: it is recorded
 * with the decision (erased with it), never written to the service's log lines nor used as a
 * metric label. Pure.
 */
export function answeredModelName(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const name = value.trim().replace(LONE_SURROGATE, '\uFFFD').replace(CONTROL, '\uFFFD');
  if (name === '') return null;
  const points = Array.from(name);
  return points.length > MAX_ANSWERED_MODEL_LENGTH ? points.slice(0, MAX_ANSWERED_MODEL_LENGTH).join('') + '…' : name;
}

/**
 * `a` then the names of `b` not in it, at most {@link MAX_ANSWERED_MODELS} in all (the first ones
 * seen): the one way answered model names add up (calls of a pass, a pass's discarded calls, a
 * session's decisions). Pure.
 */
export function mergeAnsweredModels(a: readonly string[], b: readonly string[]): string[] {
  const merged = [...a.slice(0, MAX_ANSWERED_MODELS)];
  for (const name of b) if (merged.length < MAX_ANSWERED_MODELS && !merged.includes(name)) merged.push(name);
  return merged;
}

/** {@link SummarizerUsage} with every figure present (an absent `retries` / `unreportedUsageCalls` is 0, absent `answeredModels` none). */
export type CompleteSummarizerUsage = Required<SummarizerUsage>;

/**
 * The usage figures of a summarizer outcome (or of any object carrying them, a recorded
 * `SummarizerIdentity` included), alone and complete: the one reading of them for the decision,
 * the answer, the compaction history and the metrics. An absent `retries` or
 * `unreportedUsageCalls` (a summarizer that does not count them, a decision recorded before they
 * were) is 0; absent `answeredModels` are none (`[]`).
 */
export function usageOf(outcome: SummarizerUsage | SummarizerOutcome): CompleteSummarizerUsage {
  return {
    calls: outcome.calls,
    promptTokens: outcome.promptTokens,
    completionTokens: outcome.completionTokens,
    retries: outcome.retries ?? 0,
    unreportedUsageCalls: outcome.unreportedUsageCalls ?? 0,
    answeredModels: Array.isArray(outcome.answeredModels) ? [...outcome.answeredModels] : [],
  };
}

/** A {@link SummarizerIdentity} with every usage figure present (see {@link recordedSummarizer}). */
export type CompleteSummarizerIdentity = Omit<SummarizerIdentity, 'discarded'> & CompleteSummarizerUsage & { discarded?: CompleteSummarizerUsage };

/**
 * A recorded summarizer (a decision's `summarizer`, as written now or by an older version) as
 * every reader shows it: its identity with complete usage figures ({@link usageOf}), its
 * `discarded` part likewise when present.
 */
export function recordedSummarizer(identity: SummarizerIdentity): CompleteSummarizerIdentity {
  return { kind: identity.kind, model: identity.model, ...usageOf(identity), ...(identity.discarded ? { discarded: usageOf(identity.discarded) } : {}) };
}

/**
 * The summarizer of a recorded decision as every reader shows it ({@link recordedSummarizer}): the
 * one its `CompactionCompleted` / `CompactionFailed` data names, else (a decision recorded before
 * those carried it) its `SummaryInserted`'s; null when the pass called none. The one reading for
 * the compaction history and the session's summarizer totals.
 */
export function recordedDecisionSummarizer(
  decision: { summarizer?: SummarizerIdentity },
  summary?: { summarizer?: SummarizerIdentity } | null,
): CompleteSummarizerIdentity | null {
  const identity = decision.summarizer ?? summary?.summarizer;
  return identity ? recordedSummarizer(identity) : null;
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
  return recordedSummarizer({ kind: identity.kind, model: identity.model, ...total, ...(discarded ? { discarded } : {}) });
}

/**
 * The answer's `discardedSummarizerCalls`: `identity` with the usage of the summarize calls a
 * pass made whose replies went into no decision it wrote; undefined when there were none.
 */
export function discardedSummarizerCalls(identity: SummarizerIdentityInfo, discarded: SummarizerUsage | undefined): SummarizerIdentity | undefined {
  return discarded ? recordedSummarizer({ kind: identity.kind, model: identity.model, ...discarded }) : undefined;
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
