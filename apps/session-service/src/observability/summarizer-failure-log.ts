/**
 * One `warn` line per failed compaction pass (a summarizer fault: HTTP 401/429/5xx, timeout,
 * refusal, malformed or blank reply), so a wrong key or an endpoint down shows in the service log
 * and not only in `compactions_total{outcome="failed"}` and the audit history:
 *
 *   `compaction pass failed: session "s1" (tenant "default"), compaction <id>, origin auto, stage summarize: the model endpoint rejected the credentials: HTTP 401`
 *
 * The reason is the summarizer's, built from the fault's kind and HTTP status (never message text,
 * never a key). The line carries the same failure's kind (`COMPACTION_FAILURE_KINDS`) as a field of
 * its own, `failureKind` (a JSON field beside `msg`: `{"msg":"compaction pass failed: …","failureKind":"credentials",…}`),
 * for log queries and alerts that should not parse the reason. Rate-limited, since a storm (a wrong key under many sessions) could flood the log
 * ({@link RateLimitedWarnings}): at most 10 lines per 60 s; the failures past that
 * are counted and told in one line when the window ends (`… more compaction passes failed in the
 * last 60 s, not logged one by one: 412 × the model endpoint rejected the credentials: HTTP 401`,
 * with their counts by kind as a JSON field, `"failureKindCounts":{"credentials":412}`, and no request's id).
 * The last failure's reason and time are kept for `/health` (`summarizer`).
 */
import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { EventsHandler, type IEventHandler } from '@nestjs/cqrs';
import { quoteInput, type CompactionFailureKind } from '@lib/compaction';
import { CompactionAnswered, type FailedPass } from '@lib/session';
import { RateLimitedWarnings } from './rate-limited-lines';

/** The last failed pass this process saw, for `/health`: its reason, its kind and when (ISO-8601). */
export interface LastSummarizerFailure {
  reason: string;
  failureKind: CompactionFailureKind;
  at: string;
}

/** The line of one failed pass (see the module doc). */
export function failedPassLine(pass: FailedPass, origin: 'auto' | 'command'): string {
  return `compaction pass failed: session ${quoteInput(pass.sessionId)} (tenant ${quoteInput(pass.tenantId)}), compaction ${pass.compactionId}, origin ${origin}, stage ${pass.stage}: ${pass.reason}`;
}

/** Logs failed passes (see the module doc) and keeps the last one for `/health`. */
@Injectable()
@EventsHandler(CompactionAnswered)
export class SummarizerFailureLog implements IEventHandler<CompactionAnswered>, OnModuleDestroy {
  private readonly lines = new RateLimitedWarnings(new Logger('Compaction'), 'compaction passes failed', undefined, undefined, 'failureKind');
  private last: LastSummarizerFailure | null = null;

  handle(event: CompactionAnswered): void {
    const pass = event.failedPass;
    if (!pass) return;
    this.last = { reason: pass.reason, failureKind: pass.failureKind, at: new Date().toISOString() };
    this.lines.warn(failedPassLine(pass, event.origin), pass.reason, { failureKind: pass.failureKind });
  }

  /** The last failed pass this process saw (null before any). */
  lastFailure(): LastSummarizerFailure | null {
    return this.last;
  }

  onModuleDestroy(): void {
    this.lines.close();
  }
}
