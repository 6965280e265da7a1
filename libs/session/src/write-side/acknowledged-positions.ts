/**
 * Read-your-writes within one process: the highest global position of the log state this
 * process's command answers were decided on or read from (appends, compactions, policies, erasure
 * records, and the events a command loaded or read back: another replica's decision a compaction
 * is answered with, a policy already set, an idempotent resend), so that a read sent without
 * `minPosition` can wait until the read models include everything this process answered before
 * the read arrived.
 */
import { storeWith, type AppendOptions, type AppendResult, type EventData, type EventStore, type RecordedEvent } from '@lib/event-store';

/** The highest global position (bigint, 0n before any) this process's answers were decided on or read from. */
export class AcknowledgedPositions {
  private highest = 0n;

  /** Records that an answer was decided on (or read from) the log up to global position `position` (bigint). */
  acknowledged(position: bigint): void {
    if (position > this.highest) this.highest = position;
  }

  /**
   * Records the log's head as `store` reads it now, for a command answered "not found" (404
   * `session_not_found`): that answer was decided on a log without the session, and this process's
   * read models may still hold it (a session erased through another replica, until its erasure
   * record is projected here), so a read after the 404 waits for that record instead of showing
   * the session. Called on that error path only; a head that cannot be read records nothing (the
   * answer stands).
   */
  async acknowledgeHead(store: Pick<EventStore, 'headPosition'>): Promise<void> {
    const head = await store.headPosition().catch(() => null);
    if (head !== null) this.acknowledged(head);
  }

  /** The highest acknowledged global position so far (bigint; 0n before any). */
  last(): bigint {
    return this.highest;
  }
}

/**
 * `store`, with the rule every command path shares, whatever it answers with: the global position
 * of every append's answer (also when the store answers an idempotent resend) and of every event
 * read from a stream (a loaded session state, a decision read back to answer a retry, a policy
 * already in force) is recorded in `positions`, so a read that follows waits for the log state the
 * answer was decided on, not only for what this process appended. Events read are in the log
 * already: waiting for them costs only the projector's lag. The queries read through this store
 * too (a window at a revision, a compaction's events): a later read then never shows an older
 * state than one just answered from the log. Every other method is `store`'s own.
 */
export function recordingAcknowledgedPositions(store: EventStore, positions: AcknowledgedPositions): EventStore {
  return storeWith(store, {
    async appendToStream(stream: string, events: EventData[], options?: AppendOptions): Promise<AppendResult> {
      const result = await store.appendToStream(stream, events, options);
      positions.acknowledged(result.position);
      return result;
    },
    async readStream(...args: Parameters<EventStore['readStream']>): Promise<RecordedEvent[]> {
      const events = await store.readStream(...args);
      for (const e of events) positions.acknowledged(e.position);
      return events;
    },
  });
}
