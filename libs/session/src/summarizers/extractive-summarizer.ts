/**
 * The deterministic extractive summarizer (DESIGN §3.7): no model, no I/O. The default when no
 * endpoint is configured, and named as such (`kind: 'extractive'`, model
 * `EXTRACTIVE_SUMMARIZER_MODEL`) in every decision it makes.
 */
import { EXTRACTIVE_SUMMARIZER_MODEL, type ExtractiveSummaryOptions, type SummaryRequest } from '@lib/compaction';
import { CountingTimeoutError, CountingTooCostlyError } from '../errors';
import { sharedTokenCountingPool } from '../token-counting/token-counting-pool';
import type { SummarizeOptions, Summarizer, SummarizerIdentityInfo, SummarizerOutcome } from './summarizer';

/** Options passed through to `extractiveSummary` (whatever it accepts as its second argument). */
export type ExtractiveSummarizerOptions = ExtractiveSummaryOptions;

/**
 * Wraps `extractiveSummary` as a {@link Summarizer}. Each call counts as one call with zero
 * prompt and completion tokens. A blank result (nothing extractable) resolves to `ok: false`
 * (§3.7: a blank summary is a failure, kind `invalid_reply`); so does an exception (reason names its class only;
 * kind `timeout` past the worker's deadline, else `other`), and an aborted call (`aborted`).
 * With `options.estimator`, the summary is kept within `request.maxSummaryTokens` (see
 * `extractiveSummary`); with `options.maxTextLength`, its text never has more characters than that
 * (it is passed as `extractiveSummary`'s hard bound `maxLength`), so it is never refused as too
 * long for an event. A large input is summarized in the token-counting worker thread (see `TokenCountingPool`), so a
 * pass over megabytes of archived text does not hold the event loop; past that worker's deadline
 * the pass fails with a reason naming the timeout, and nothing but the failure is recorded.
 */
export class ExtractiveSummarizer implements Summarizer {
  readonly identity: SummarizerIdentityInfo = { kind: 'extractive', model: EXTRACTIVE_SUMMARIZER_MODEL };

  constructor(private readonly options?: ExtractiveSummarizerOptions) {}

  async summarize(request: SummaryRequest, options: SummarizeOptions = {}): Promise<SummarizerOutcome> {
    const usage = { calls: 1, promptTokens: 0, completionTokens: 0 };
    if (options.signal?.aborted) return { ok: false, reason: 'aborted', failureKind: 'aborted', ...usage };
    let text: string;
    try {
      text = await sharedTokenCountingPool().extractiveSummary(request, {
        ...this.options,
        ...(options.estimator ? { estimator: options.estimator } : {}),
        // the caller's bound wins over a looser one of these options: the summary always fits an event
        ...(options.maxTextLength !== undefined ? { maxLength: Math.min(options.maxTextLength, this.options?.maxLength ?? Infinity) } : {}),
      });
    } catch (err) {
      // past the worker's deadline (COUNTING_DEADLINE_MS): a timeout; anything else is the summarizer's own error
      const failureKind = err instanceof CountingTimeoutError || err instanceof CountingTooCostlyError ? 'timeout' : 'other';
      return { ok: false, reason: `extractive summarizer error: ${err instanceof Error ? err.name : typeof err}`, failureKind, ...usage };
    }
    const trimmed = typeof text === 'string' ? text.trim() : '';
    if (trimmed.length === 0) return { ok: false, reason: 'blank reply: the extractive summary is empty', failureKind: 'invalid_reply', ...usage };
    return { ok: true, text: trimmed, ...usage };
  }
}
