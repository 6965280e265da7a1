/**
 * Lines a client or a fault can repeat without bound (a failed compaction pass per session, a
 * request Node could not parse per connection), rate-limited so that a storm cannot flood the log:
 * at most {@link LINES_PER_WINDOW} lines per {@link LINE_WINDOW_MS} (a window starts at the first
 * line after the last one ended); the ones past that are counted by reason and told in one line
 * when the window ends (`412 more compaction passes failed in the last 60 s, not logged one by one:
 * 400 × HTTP 401; 12 × HTTP 500`).
 */
import type { Logger } from '@nestjs/common';
import { inThisContext, type InContext } from '@lib/session';

/** Lines per window before repeats are only counted. */
export const LINES_PER_WINDOW = 10;
/** The window of {@link LINES_PER_WINDOW} (ms). */
export const LINE_WINDOW_MS = 60_000;
/** Distinct reasons named in the line that tells the repeats not logged one by one (the most frequent first). */
const REASONS_NAMED = 5;

/**
 * Decides which lines are written (pure but for the timer it asks for): the first `perWindow` of
 * each window of `windowMs` (ms) starting at a line; later ones are counted by reason and told by
 * {@link flush}, as `<n> more <what> in the last <s> s, not logged one by one: <n> × <reason>; …`.
 */
export class LineLimiter {
  private windowStart = -Infinity;
  private logged = 0;
  private readonly suppressed = new Map<string, number>();

  /** `what`: what the counted lines were about, plural (e.g. `compaction passes failed`). */
  constructor(
    private readonly what: string,
    private readonly perWindow = LINES_PER_WINDOW,
    private readonly windowMs = LINE_WINDOW_MS,
  ) {}

  /**
   * Whether the line at `now` (ms) with `reason` is written; `told` is the line about the previous
   * window's unwritten lines when this one opened a new window (else null); `flushAt` the time (ms)
   * to call {@link flush} at when this line was the first one counted.
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

  /** The line telling the lines counted and not written since the last flush, or null when none; resets the count. */
  flush(): string | null {
    if (this.suppressed.size === 0) return null;
    const counts = [...this.suppressed].sort((a, b) => b[1] - a[1]);
    this.suppressed.clear();
    const total = counts.reduce((sum, [, n]) => sum + n, 0);
    const named = counts.slice(0, REASONS_NAMED).map(([reason, n]) => `${n} × ${reason}`);
    const others = counts.length > REASONS_NAMED ? `; ${counts.length - REASONS_NAMED} other reasons` : '';
    return `${total} more ${this.what} in the last ${Math.round(this.windowMs / 1000)} s, not logged one by one: ${named.join('; ')}${others}`;
  }
}

/**
 * Warn lines through `logger`, rate-limited by a {@link LineLimiter}: {@link warn} writes a line or
 * counts it, and the count is told at the window's end (a timer that does not keep the process
 * alive) or at {@link close}. The line that tells the count is written outside every request's
 * context (it is about many requests: it carries no one request's id). With `countField`, the lines
 * not written are also counted by the value of that field of theirs, and the telling line carries
 * the counts as a JSON field `<countField>Counts` (e.g. `{"failureKindCounts":{"credentials":400}}`),
 * so a log query by that field still counts every line.
 */
export class RateLimitedWarnings {
  private readonly limiter: LineLimiter;
  private timer: NodeJS.Timeout | null = null;
  /** Made where this instance was (at start-up, outside any request): the telling line is written in its context. */
  private readonly outsideRequests: InContext = inThisContext();
  /** Lines not written since the last telling line, by their `countField` value. */
  private readonly counted = new Map<string, number>();

  /** `what`: see {@link LineLimiter}; `perWindow` lines per `windowMs` (ms); `countField`: see the class doc. */
  constructor(
    private readonly logger: Pick<Logger, 'warn'>,
    what: string,
    perWindow = LINES_PER_WINDOW,
    windowMs = LINE_WINDOW_MS,
    private readonly countField?: string,
  ) {
    this.limiter = new LineLimiter(what, perWindow, windowMs);
  }

  /**
   * Writes `line` at warn unless this window's lines are spent; then counts it under `reason` (short, no client text).
   * With `fields`, the line is logged as an object, `{ ...fields, msg: line }`: with pino, JSON fields of the line beside its `msg`.
   */
  warn(line: string, reason: string, fields?: Readonly<Record<string, string | number | boolean>>): void {
    const written = this.admit(reason);
    if (written) this.logger.warn(fields ? { ...fields, msg: line } : line);
    else if (this.countField !== undefined) {
      const value = fields?.[this.countField];
      const key = value === undefined ? '(none)' : String(value);
      this.counted.set(key, (this.counted.get(key) ?? 0) + 1);
    }
  }

  /**
   * Whether a line about `reason` (short, no client text) may be written now: true while this
   * window's lines are not spent; else it is counted under `reason` and told at the window's end,
   * as {@link warn}'s lines are. For lines another logger writes (a request's line, whose level the
   * caller then chooses), so they are limited and told the same way.
   */
  admit(reason: string): boolean {
    const now = Date.now();
    const { line: written, told, flushAt } = this.limiter.admit(now, reason);
    if (told) this.tell(told);
    if (flushAt !== null) {
      if (this.timer) clearTimeout(this.timer);
      this.timer = this.outsideRequests(() => setTimeout(() => this.flush(), Math.max(0, flushAt - now)));
      this.timer.unref();
    }
    return written;
  }

  /** Tells the lines counted so far (if any) now and stops the timer. */
  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.flush();
  }

  private flush(): void {
    this.timer = null;
    const told = this.limiter.flush();
    if (told) this.tell(told);
  }

  /** Writes the line telling the lines not written (with their counts by `countField`), outside any request's context. */
  private tell(told: string): void {
    const counts = this.countField !== undefined && this.counted.size > 0 ? { [`${this.countField}Counts`]: Object.fromEntries(this.counted) } : null;
    this.counted.clear();
    this.outsideRequests(() => this.logger.warn(counts ? { ...counts, msg: told } : told));
  }
}
