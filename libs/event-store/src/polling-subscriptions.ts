import type { ReadAllOptions, RecordedEvent, SubscribeOptions, Subscription } from './event-store.port';
import { completeLastAppend } from './append-boundary';
import { PollingSubscription } from './polling-subscription';

/**
 * The live {@link PollingSubscription}s of one store (for adapters whose log is a table): opens
 * them on the store's paged global reads, wakes them after the store's own commits, and closes
 * them with the store.
 */
export class PollingSubscriptions {
  private readonly live = new Set<PollingSubscription>();

  /**
   * @param readAll the store's global read (see {@link EventStore.readAll})
   * @param pollIntervalMs how long (ms) an idle subscription waits before re-reading
   * @param pageSize events per page while catching up (a page is completed to the end of its last append: see {@link completeLastAppend})
   */
  constructor(
    private readonly readAll: (options: ReadAllOptions) => Promise<RecordedEvent[]>,
    private readonly pollIntervalMs: number,
    private readonly pageSize: number,
  ) {}

  /** A new subscription after `options.fromPosition` (0n: from the beginning), filtered by `options.streamPrefix`. */
  open(options: SubscribeOptions): Subscription {
    const sub: PollingSubscription = new PollingSubscription(
      async (after) => {
        const read = (position: bigint, maxCount: number) => this.readAll({ fromPosition: position, maxCount, streamPrefix: options.streamPrefix });
        // A page ends where an append ends, so a consumer that commits page by page never commits half of one.
        return completeLastAppend(await read(after, this.pageSize), this.pageSize, read);
      },
      options.fromPosition ?? 0n,
      this.pollIntervalMs,
      () => this.live.delete(sub),
      this.pageSize,
    );
    this.live.add(sub);
    return sub;
  }

  /** Tells every live subscription that new events may be there (after a commit of this process). */
  wake(): void {
    for (const sub of this.live) sub.wake();
  }

  /** Closes every live subscription (their iterations end). */
  async closeAll(): Promise<void> {
    await Promise.all([...this.live].map((s) => s.close()));
  }
}
