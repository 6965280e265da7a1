/**
 * Counts compaction passes in {@link ServiceMetrics}: every answered pass, commanded or automatic,
 * by origin, outcome and noop reason (DESIGN §3.6; an answer replaying an earlier decision is not a
 * pass, and a dry run is counted apart in `compaction_dry_runs_total`), and the automatic passes deferred by the
 * growth rule of DESIGN §3.5.
 */
import { Injectable } from '@nestjs/common';
import { EventsHandler, type IEventHandler } from '@nestjs/cqrs';
import { AutoCompactionDeferred, CompactionAnswered } from '@lib/session';
import { ServiceMetrics } from './metrics';

/** Feeds `compactions_total`, `compaction_dry_runs_total` and `auto_compactions_deferred_total`. */
@Injectable()
@EventsHandler(CompactionAnswered, AutoCompactionDeferred)
export class CompactionMetricsHandler implements IEventHandler<CompactionAnswered | AutoCompactionDeferred> {
  constructor(private readonly metrics: ServiceMetrics) {}

  handle(event: CompactionAnswered | AutoCompactionDeferred): void {
    if (event instanceof AutoCompactionDeferred) this.metrics.autoCompactionsDeferred.inc();
    // A dry run is a preview, not a pass: counted apart, so a dashboard of passes does not count previews.
    else if (event.dryRun) this.metrics.compactionDryRuns.inc({ outcome: event.outcome, reason: event.reason ?? '' });
    // A replayed answer is a decision counted when it was made (DESIGN §3.6: passes by outcome).
    else if (!event.replayed) this.metrics.compactions.inc({ origin: event.origin, outcome: event.outcome, reason: event.reason ?? '' });
  }
}
