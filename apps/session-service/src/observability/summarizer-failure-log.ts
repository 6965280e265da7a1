/**
 * One `warn` line per failed compaction pass (a summarizer fault: HTTP 401/429/5xx, timeout,
 * refusal, malformed or blank reply), so a wrong key or an endpoint down shows in the service log
 * and not only in `compactions_total{outcome="failed"}` and the audit history:
 *
 *   `compaction pass failed: session "s1" (tenant "default"), compaction <id>, origin auto, stage summarize: the model endpoint rejected the credentials: HTTP 401`
 *
 * The reason is the summarizer's, built from the fault's kind and HTTP status (never message text,
 * never a key). Rate-limited, since a storm (a wrong key under many sessions) could flood the log:
 * at most {@link FAILURE_LINES_PER_WINDOW} lines per {@link FAILURE_WINDOW_MS}; the failures past that
 * are counted and told in one line when the window ends (`… more compaction passes failed in the
 * last 60 s, not logged one by one: 412 × the model endpoint rejected the credentials: HTTP 401`).
 * The last failure's reason and time are kept for `/health` (`summarizer`).
 */
import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { EventsHandler, type IEventHandler } from '@nestjs/cqrs';
import { quoteInput } from '@lib/compaction';
import { CompactionAnswered, type FailedPass } from '@lib/session';

/** Lines per window before failures are only counted. */
export const FAILURE_LINES_PER_WINDOW = 10;
/** The window of {@link FAILURE_LINES_PER_WINDOW} (ms). */
export const FAILURE_WINDOW_MS = 60_000;
/** Distinct reasons named in the line that tells the failures not logged one by one (the most frequent first). */
const REASONS_NAMED = 5;

/** The last failed pass this process saw, for `/health`: its reason and when (ISO-8601). */
export interface LastSummarizerFailure {
  reason: string;
  at: string;
}

/** The line of one failed pass (see the module doc). */
export function failedPassLine(pass: FailedPass, origin: 'auto' | 'command'): string {
  return `compaction pass failed: session ${quoteInput(pass.sessionId)} (tenant ${quoteInput(pass.tenantId)}), compaction ${pass.compactionId}, origin ${origin}, stage ${pass.stage}: ${pass.reason}`;
}

/**
 * Decides which failures get a line (pure but for the timer it asks for): the first
 * {@link FAILURE_LINES_PER_WINDOW} of each window of {@link FAILURE_WINDOW_MS} starting at a
 * failure; later ones are counted by reason and told by {@link flush}.
 */
export class FailureLineLimiter {
  private windowStart = -Infinity;
  private logged = 0;
  private readonly suppressed = new Map<string, number>();

  constructor(
    private readonly perWindow = FAILURE_LINES_PER_WINDOW,
    private readonly windowMs = FAILURE_WINDOW_MS,
  ) {}

  /**
   * Whether the failure at `now` (ms) with `reason` gets its own line; `told` is the line about the
   * previous window's unlogged failures when this failure opened a new window (else null);
   * `flushAt` the time (ms) to call {@link flush} at when this failure was the first one counted.
   */
  admit(now: number, reason: string): { line: boolean; told: string | null; flushAt: number | null } {
    let told: string | null = null;
    if (now - this.windowStart >= this.windowMs) {
      told = this.flush();
      this.windowStart = now;
      this.logged = 0;
    }
    if (this.logged < this.perWindow) {
      this.logged++;
      return { line: true, told, flushAt: null };
    }
    const first = this.suppressed.size === 0;
    this.suppressed.set(reason, (this.suppressed.get(reason) ?? 0) + 1);
    return { line: false, told, flushAt: first ? this.windowStart + this.windowMs : null };
  }

  /** The line telling the failures counted and not logged since the last flush, or null when none; resets the count. */
  flush(): string | null {
    if (this.suppressed.size === 0) return null;
    const counts = [...this.suppressed].sort((a, b) => b[1] - a[1]);
    this.suppressed.clear();
    const total = counts.reduce((sum, [, n]) => sum + n, 0);
    const named = counts.slice(0, REASONS_NAMED).map(([reason, n]) => `${n} × ${reason}`);
    const others = counts.length > REASONS_NAMED ? `; ${counts.length - REASONS_NAMED} other reasons` : '';
    return `${total} more compaction passes failed in the last ${Math.round(this.windowMs / 1000)} s, not logged one by one: ${named.join('; ')}${others}`;
  }
}

/** Logs failed passes (see the module doc) and keeps the last one for `/health`. */
@Injectable()
@EventsHandler(CompactionAnswered)
export class SummarizerFailureLog implements IEventHandler<CompactionAnswered>, OnModuleDestroy {
  private readonly logger = new Logger('Compaction');
  private readonly limiter = new FailureLineLimiter();
  private timer: NodeJS.Timeout | null = null;
  private last: LastSummarizerFailure | null = null;

  handle(event: CompactionAnswered): void {
    const pass = event.failedPass;
    if (!pass) return;
    const now = Date.now();
    this.last = { reason: pass.reason, at: new Date(now).toISOString() };
    const { line, told, flushAt } = this.limiter.admit(now, pass.reason);
    if (told) this.logger.warn(told);
    if (line) this.logger.warn(failedPassLine(pass, event.origin));
    if (flushAt !== null) {
      if (this.timer) clearTimeout(this.timer);
      this.timer = setTimeout(() => this.flush(), Math.max(0, flushAt - now));
      this.timer.unref();
    }
  }

  /** The last failed pass this process saw (null before any). */
  lastFailure(): LastSummarizerFailure | null {
    return this.last;
  }

  onModuleDestroy(): void {
    if (this.timer) clearTimeout(this.timer);
    this.flush();
  }

  private flush(): void {
    this.timer = null;
    const told = this.limiter.flush();
    if (told) this.logger.warn(told);
  }
}
