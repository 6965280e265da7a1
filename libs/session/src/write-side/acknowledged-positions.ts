/**
 * Read-your-writes within one process: the highest global position at which this process's
 * writes (appends, compactions, policies, erasure records) were acknowledged, so that a read sent
 * without `minPosition` can wait until the read models include every write this process answered
 * before the read arrived.
 */
import type { AppendOptions, AppendResult, EventData, EventStore, ReadAllOptions, ReadStreamOptions, SubscribeOptions } from '@lib/event-store';

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
    readStream: (stream: string, options?: ReadStreamOptions) => store.readStream(stream, options),
    readAll: (options?: ReadAllOptions) => store.readAll(options),
    streamRevision: (stream: string) => store.streamRevision(stream),
    headPosition: () => store.headPosition(),
    subscribeToAll: (options?: SubscribeOptions) => store.subscribeToAll(options),
    deleteStream: (stream: string) => store.deleteStream(stream),
    close: () => store.close(),
  };
}
