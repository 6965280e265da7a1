/**
 * Counts compaction passes in {@link ServiceMetrics}: every answered pass, commanded or automatic,
 * by origin, outcome and reason (a noop's reason, a failure's kind; DESIGN §3.6; an answer replaying an earlier decision is not a
 * pass, and a dry run is counted apart in `compaction_dry_runs_total`), and the automatic passes deferred by the
 * growth rule of DESIGN §3.5, and those put off for another replica's claim; and the summarizer calls every pass made, with their tokens, by what
 * became of their replies ({@link SummarizerReplyLabel}: used, failed or discarded; a reply the
 * pass did not use still cost a model call).
 */
import { Injectable } from '@nestjs/common';
import { EventsHandler, type IEventHandler } from '@nestjs/cqrs';
import { compactionFailureKind } from '@lib/compaction';
import { AutoCompactionClaimedElsewhere, AutoCompactionDeferred, CompactionAnswered, SummarizerCallsSpent, usageOf, type SummarizerUsage } from '@lib/session';
import { ServiceMetrics } from './metrics';

/** Feeds `compactions_total`, `compaction_dry_runs_total`, `auto_compactions_deferred_total`, `auto_compactions_claimed_elsewhere_total`, `summarizer_calls_total`, `summarizer_retries_total`, `summarizer_unreported_usage_calls_total` and `summarizer_tokens_total`. */
@Injectable()
@EventsHandler(CompactionAnswered, AutoCompactionDeferred, AutoCompactionClaimedElsewhere, SummarizerCallsSpent)
export class CompactionMetricsHandler implements IEventHandler<
  CompactionAnswered | AutoCompactionDeferred | AutoCompactionClaimedElsewhere | SummarizerCallsSpent
> {
  constructor(private readonly metrics: ServiceMetrics) {}

  handle(event: CompactionAnswered | AutoCompactionDeferred | AutoCompactionClaimedElsewhere | SummarizerCallsSpent): void {
    if (event instanceof AutoCompactionDeferred) this.metrics.autoCompactionsDeferred.inc();
    else if (event instanceof AutoCompactionClaimedElsewhere) this.metrics.autoCompactionsClaimedElsewhere.inc();
    else if (event instanceof SummarizerCallsSpent) {
      this.countSummarizer(event, summarizerReplyLabel(event.outcome), event.used);
      this.countSummarizer(event, 'discarded', event.discarded);
    }
    // A dry run is a preview, not a pass: counted apart, so a dashboard of passes does not count previews.
    else if (event.dryRun) this.metrics.compactionDryRuns.inc({ outcome: event.outcome, reason: event.reason ?? '' });
    // A replayed answer is a decision counted when it was made (DESIGN §3.6: passes by outcome).
    // reason: a noop's reason, a failure's kind (both closed sets: bounded cardinality), else empty.
    else if (!event.replayed) this.metrics.compactions.inc({ origin: event.origin, outcome: event.outcome, reason: reasonLabel(event) });
  }

  /** Adds `usage` (when any) to the summarizer counters under `reply`. */
  private countSummarizer(event: SummarizerCallsSpent, reply: SummarizerReplyLabel, usage: SummarizerUsage | undefined): void {
    if (!usage) return;
    const labels = { origin: event.origin, outcome: event.outcome, reply };
    const figures = usageOf(usage);
    this.metrics.summarizerCalls.inc(labels, figures.calls);
    this.metrics.summarizerRetries.inc(labels, figures.retries);
    this.metrics.summarizerUnreportedUsageCalls.inc(labels, figures.unreportedUsageCalls);
    this.metrics.summarizerTokens.inc({ ...labels, type: 'prompt' }, usage.promptTokens);
    this.metrics.summarizerTokens.inc({ ...labels, type: 'completion' }, usage.completionTokens);
  }
}

/**
 * The `reason` label of `compactions_total`: a noop's reason (`within-limit`, …), a failed pass's
 * kind (one of `COMPACTION_FAILURE_KINDS`, `other` for a kind outside it; it was empty before
 * 2026-12-04), empty for every other outcome. Two closed sets: the label's values stay bounded. Pure.
 */
export function reasonLabel(event: Pick<CompactionAnswered, 'outcome' | 'reason' | 'failedPass'>): string {
  return event.outcome === 'failed' ? compactionFailureKind(event.failedPass?.failureKind) : (event.reason ?? '');
}

/**
 * The `reply` label of the summarizer counters: what became of the replies counted.
 * - `used`: they went into the summary of the decision the pass recorded;
 * - `failed`: the calls of a pass that recorded a failure (the summarizer failed, or its reply was
 *   blank, refused or unusable): no summary was written from them, the failed decision records them;
 * - `discarded`: replies the pass threw away (planned again after the session moved on, erased
 *   meanwhile, or another pass recorded the same compaction first), whatever the pass's outcome.
 */
export type SummarizerReplyLabel = 'used' | 'failed' | 'discarded';

/** The `reply` label of the calls whose reply a pass with answer `outcome` kept in its decision ({@link SummarizerReplyLabel}). Pure. */
export function summarizerReplyLabel(outcome: SummarizerCallsSpent['outcome']): Exclude<SummarizerReplyLabel, 'discarded'> {
  return outcome === 'failed' ? 'failed' : 'used';
}
