/**
 * Read-your-writes within one process: the highest global position at which this process's
 * writes (appends, compactions, policies, erasure records) were acknowledged, so that a read sent
 * without `minPosition` can wait until the read models include every write this process answered
 * before the read arrived.
 */
import type { AppendOptions, AppendResult, EventData, EventStore } from '@lib/event-store';

/** The highest global position (bigint, 0n before any write) this process's appends were acknowledged at. */
export class AcknowledgedPositions {
  private highest = 0n;

  /** Records an acknowledged write at global position `position` (bigint). */
  acknowledged(position: bigint): void {
    if (position > this.highest) this.highest = position;
  }

  /** The highest acknowledged global position so far (bigint; 0n before any write). */
  last(): bigint {
    return this.highest;
  }
}

/**
 * `store`, with every acknowledged append (its answer's `position`, also when the store answers an
 * idempotent resend) recorded in `positions`. Every other method is `store`'s own.
 */
export function recordingAcknowledgedPositions(store: EventStore, positions: AcknowledgedPositions): EventStore {
  return {
    async appendToStream(stream: string, events: EventData[], options?: AppendOptions): Promise<AppendResult> {
      const result = await store.appendToStream(stream, events, options);
      positions.acknowledged(result.position);
      return result;
    },
    // Every argument passed on as given (a method's options added later must not be dropped here).
    readStream: (...args) => store.readStream(...args),
    readAll: (...args) => store.readAll(...args),
    streamRevision: (...args) => store.streamRevision(...args),
    streamIncarnation: (...args) => store.streamIncarnation(...args),
    headPosition: (...args) => store.headPosition(...args),
    subscribeToAll: (...args) => store.subscribeToAll(...args),
    deleteStream: (...args) => store.deleteStream(...args),
    close: (...args) => store.close(...args),
  };
}
