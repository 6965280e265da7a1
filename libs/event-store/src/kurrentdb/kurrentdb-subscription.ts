import type { AllStreamSubscription } from '@kurrent/kurrentdb-client';
import type { RecordedEvent, Subscription } from '../event-store.port';
import { mapKurrentError } from './kurrentdb-errors';
import { toRecordedEvent } from './kurrentdb-mapping';

/**
 * A port {@link Subscription} over a KurrentDB `$all` catch-up subscription. Events at or before
 * the bigint checkpoint `fromPosition` (commit position) are dropped, so the checkpoint is
 * exclusive whatever the server does; the checkpoint moves forwards, so each event comes once.
 */
export class KurrentDbSubscription implements Subscription {
  private closed = false;
  private iterated = false;

  constructor(
    private readonly source: AllStreamSubscription,
    private readonly fromPosition: bigint,
    private readonly onClose: () => void = () => undefined,
  ) {}

  /** Stops the server subscription; the iteration then ends. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.onClose();
    try {
      await this.source.unsubscribe();
    } catch {
      // already gone
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<RecordedEvent> {
    if (this.iterated) throw new Error('a Subscription can be iterated only once');
    this.iterated = true;
    return this.iterate();
  }

  private async *iterate(): AsyncGenerator<RecordedEvent> {
    let checkpoint = this.fromPosition;
    try {
      for await (const resolved of this.source) {
        if (this.closed) return;
        if (!resolved.event) continue;
        const event = toRecordedEvent(resolved.event);
        if (event.position <= checkpoint) continue;
        checkpoint = event.position;
        yield event;
      }
    } catch (error) {
      if (!this.closed) throw mapKurrentError(error);
    } finally {
      await this.close();
    }
  }
}
