import type Database from 'better-sqlite3';

/** When a post-erasure WAL checkpoint that another connection refused is tried again ({@link SqliteWalPurge}). */
export interface WalPurgeRetry {
  /** Delay (ms) before the first retry; each following one waits twice as long, up to {@link maxDelayMs}. Default 100. */
  firstDelayMs?: number;
  /** Longest delay (ms) between two retries (the bound of the backoff). Default 2000. */
  maxDelayMs?: number;
}

/** Defaults of {@link WalPurgeRetry}: 100 ms, doubling, at most 2 s between two tries. */
export const WAL_PURGE_RETRY_DEFAULTS: Required<WalPurgeRetry> = { firstDelayMs: 100, maxDelayMs: 2000 };

/** A scrub of the WAL that was refused at first and has now completed (see {@link SqliteWalPurge.onScrubbed}). */
export interface WalScrubbed {
  /** The WAL file (`<database file>-wal`). */
  file: string;
  /** Checkpoints tried, the one that succeeded included. */
  attempts: number;
  /** ms from the first refused checkpoint to the one that succeeded. */
  pendingMs: number;
}

/** A scrub of the WAL still pending: erased pages are still in the file (see {@link SqliteWalPurge.pendingScrub}). */
export interface PendingWalScrub {
  /** The WAL file (`<database file>-wal`). */
  file: string;
  /** ISO-8601 UTC time the first checkpoint was refused. */
  since: string;
}

/**
 * Erasure in the WAL: after a transaction that deleted rows, the WAL still holds older copies of
 * their pages until it is checkpointed. `wal_checkpoint(TRUNCATE)` copies it into the database
 * file and truncates it to zero bytes. Another connection's open read (e.g. a `sqlite3 .backup`
 * or `VACUUM INTO` of the running service) or write prevents a full checkpoint: the purge then
 * stays pending, is tried again after the next transaction and on close, and, with `retry`, on a
 * timer (unref'd: it never keeps the process alive) whose delay doubles from `firstDelayMs` up to
 * `maxDelayMs`, until it succeeds, without waiting for further writes. A retry never waits for
 * the other connection (busy timeout 0 while it runs), so it never blocks the thread.
 */
export class SqliteWalPurge {
  /** A committed deletion still has older page copies in the WAL. */
  pending = false;
  private readonly retry: Required<WalPurgeRetry> | null;
  private timer: NodeJS.Timeout | undefined;
  private delayMs: number;
  private stopped = false;
  /** Date.now() of the first refused checkpoint while pending, null when none was refused. */
  private refusedSince: number | null = null;
  private attempts = 0;
  private readonly listeners: Array<(scrubbed: WalScrubbed) => void> = [];

  /** `retry`: retry a refused checkpoint on a timer ({@link WalPurgeRetry}); null (default): only after the next transaction and on close. */
  constructor(
    private readonly db: Database.Database,
    retry: WalPurgeRetry | null = null,
  ) {
    this.retry = retry === null ? null : { ...WAL_PURGE_RETRY_DEFAULTS, ...retry };
    this.delayMs = this.retry?.firstDelayMs ?? 0;
  }

  /**
   * Checkpoints (TRUNCATE) now. Returns false when another connection prevented a full
   * checkpoint (it stays pending, and with `retry` is tried again on the timer).
   * @throws better-sqlite3's error when the checkpoint itself fails (it stays pending).
   */
  purge(): boolean {
    let complete = false;
    try {
      complete = this.checkpoint();
    } finally {
      this.settle(complete);
    }
    return complete;
  }

  /** Purges when pending; a failure leaves it pending (the deletion is committed either way). */
  tryPurge(): void {
    if (!this.pending) return;
    try {
      this.purge();
    } catch {
      // stays pending: retried after the next transaction, on the timer (with retry) and on close
    }
  }

  /**
   * After a transaction (that may have deleted rows): purges when pending, without waiting for
   * another connection when retrying on the timer (the thread goes on; a refusal is retried), else
   * waiting up to the connection's busy timeout as {@link tryPurge}. Never throws.
   */
  purgeAfterTransaction(): void {
    if (!this.pending) return;
    if (this.retry === null) this.tryPurge();
    else this.attemptWithoutWaiting();
  }

  /**
   * Marks a purge as pending and tries it now without waiting for another connection (busy timeout
   * 0): e.g. after a deletion committed on another connection of this file (the writer thread's).
   * A refusal is retried as {@link purge}'s. Never throws.
   */
  purgeWithoutWaiting(): void {
    this.pending = true;
    this.attemptWithoutWaiting();
  }

  /** The scrub still pending after a refused checkpoint, or null (none pending, or not refused yet). */
  pendingScrub(): PendingWalScrub | null {
    if (!this.pending || this.refusedSince === null) return null;
    return { file: `${this.db.name}-wal`, since: new Date(this.refusedSince).toISOString() };
  }

  /** Calls `listener` each time a scrub that was refused at first completes (e.g. to log one line). */
  onScrubbed(listener: (scrubbed: WalScrubbed) => void): void {
    this.listeners.push(listener);
  }

  /** Stops the retry timer (before the connection closes). Idempotent. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private checkpoint(): boolean {
    this.attempts += 1;
    const [result] = this.db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number; log: number; checkpointed: number }>;
    return result === undefined || result.busy === 0;
  }

  /** One try with busy timeout 0 (the connection's own is restored), unless the connection is closed or inside a transaction. */
  private attemptWithoutWaiting(): void {
    this.timer = undefined;
    if (!this.pending || this.stopped || !this.db.open) return;
    let complete = false;
    try {
      if (!this.db.inTransaction) {
        const busyTimeout = this.db.pragma('busy_timeout', { simple: true }) as number;
        this.db.pragma('busy_timeout = 0');
        try {
          complete = this.checkpoint();
        } finally {
          this.db.pragma(`busy_timeout = ${busyTimeout}`);
        }
      }
    } catch {
      // stays pending: tried again on the timer
    } finally {
      this.settle(complete);
    }
  }

  /** Records a try's outcome: a success ends the scrub (telling the listeners when it had been refused), a refusal arms the timer. */
  private settle(complete: boolean): void {
    this.pending = !complete;
    if (complete) {
      clearTimeout(this.timer);
      this.timer = undefined;
      const refusedSince = this.refusedSince;
      const attempts = this.attempts;
      this.refusedSince = null;
      this.attempts = 0;
      this.delayMs = this.retry?.firstDelayMs ?? 0;
      if (refusedSince !== null) {
        const scrubbed = { file: `${this.db.name}-wal`, attempts, pendingMs: Date.now() - refusedSince };
        for (const listener of this.listeners) listener(scrubbed);
      }
      return;
    }
    this.refusedSince ??= Date.now();
    if (this.retry === null || this.stopped || this.timer !== undefined) return;
    this.timer = setTimeout(() => this.attemptWithoutWaiting(), this.delayMs);
    this.timer.unref();
    this.delayMs = Math.min(this.delayMs * 2, this.retry.maxDelayMs);
  }
}
