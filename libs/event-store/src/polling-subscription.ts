import type { RecordedEvent, Subscription } from './event-store.port';
import { LONG_TASK_MS, yieldToIo } from './yield-to-io';

/** Reads the next page of the global log strictly after `afterPosition` (a bigint checkpoint). */
export type ReadPage = (afterPosition: bigint) => Promise<RecordedEvent[]>;

/**
 * A catch-up-then-live subscription built on paged reads of the global log: it reads pages after
 * its checkpoint until a page is empty (or shorter than its page size), then waits until {@link wake} is called (an in-process
 * append) or `pollIntervalMs` milliseconds pass (to see appends from other processes), and reads
 * again. Events come in global order, each once (the checkpoint only moves forwards).
 *
 * Only one iteration per subscription. Breaking out of `for await` closes it. If a page read
 * rejects, the iteration throws that error and the subscription is closed.
 */
export class PollingSubscription implements Subscription {
  private closed = false;
  private woken = false;
  private wakeWaiter: (() => void) | null = null;
  private timer: NodeJS.Timeout | null = null;
  private iterated = false;

  /**
   * @param readPage page reader (see {@link ReadPage})
   * @param fromPosition exclusive bigint checkpoint to start after; 0n = from the beginning
   * @param pollIntervalMs how long to wait (ms) before re-reading when not woken
   * @param onClose called once when the subscription closes
   * @param pageSize the most events `readPage` returns unless it completes an append (a shorter
   *   page means the log's head was reached, so the next read waits for {@link wake} or the poll
   *   interval); without it, reads again until a page is empty
   */
  constructor(
    private readonly readPage: ReadPage,
    private readonly fromPosition: bigint,
    private readonly pollIntervalMs: number,
    private readonly onClose: () => void = () => undefined,
    private readonly pageSize?: number,
  ) {}

  /** Signals that new events may be available (called by the store after a commit). */
  wake(): void {
    this.woken = true;
    this.release();
  }

  /** Stops the subscription; a pending or later `next()` ends the iteration. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.release();
    this.onClose();
  }

  [Symbol.asyncIterator](): AsyncIterator<RecordedEvent> {
    if (this.iterated) throw new Error('a Subscription can be iterated only once');
    this.iterated = true;
    return this.iterate();
  }

  private async *iterate(): AsyncGenerator<RecordedEvent> {
    let checkpoint = this.fromPosition;
    try {
      while (!this.closed) {
        this.woken = false;
        const started = performance.now();
        const page = await this.readPage(checkpoint);
        if (page.length === 0) {
          await this.waitForWake();
          continue;
        }
        // A long read (huge events) lets other requests in before its events are applied.
        if (performance.now() - started >= LONG_TASK_MS) await yieldToIo();
        for (const event of page) {
          if (this.closed) return;
          if (event.position <= checkpoint) continue; // defensive: never deliver twice
          checkpoint = event.position;
          yield event;
        }
        // A page shorter than asked for reached the log's head as its read saw it: the next read
        // would find nothing unless something was committed since, which wakes this subscription
        // (or the poll interval passes, for other processes' commits).
        if (this.pageSize !== undefined && page.length < this.pageSize) await this.waitForWake();
      }
    } finally {
      await this.close();
    }
  }

  private waitForWake(): Promise<void> {
    if (this.woken || this.closed) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.wakeWaiter = resolve;
      this.timer = setTimeout(() => this.release(), this.pollIntervalMs);
    });
  }

  private release(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const waiter = this.wakeWaiter;
    this.wakeWaiter = null;
    waiter?.();
  }
}
