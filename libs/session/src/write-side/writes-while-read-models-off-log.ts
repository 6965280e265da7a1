/**
 * Writes are refused while the projector finds the read models projected from another log than the
 * event store's (`SessionProjector.readModelsOffLog`: the store was restored from an older backup,
 * or replaced, under this running process). An append the store took then would be acknowledged
 * although no read of this process could show it (its read models are at a checkpoint of the other
 * log: a read with the append's `minPosition` would answer from them, e.g. 404), and the process
 * cannot rebuild them safely while it serves (see docs/stores.md "Backup and restore"). Refused writes
 * answer 503 `store_unavailable` (nothing written): another replica, or this one once restarted on
 * rebuilt read models, takes them. The refusal ends by itself if the store holds the read models'
 * log again (the projector checks at every retry).
 */
import { EventStoreUnavailableError, type EventStore } from '@lib/event-store';
import { refusingWritesWhile } from './writes-refused-while';

/** A write refused because the read models come from another log than the store's. */
export class ReadModelsOffLogWriteError extends EventStoreUnavailableError {
  /** `why`: the projector's `readModelsOffLog` (what differs, the file, the remedy). */
  constructor(why: string) {
    super(`${why}; writes are refused until then (nothing written)`);
  }
}

/**
 * `store`, whose `appendToStream` and `deleteStream` throw {@link ReadModelsOffLogWriteError} without
 * writing while `readModelsOffLog()` (the projector's) answers why the read models are of another
 * log; every other method, and every write otherwise, is `store`'s own.
 */
export function refusingWritesWhileReadModelsOffLog(store: EventStore, readModelsOffLog: () => string | null): EventStore {
  return refusingWritesWhile(store, () => {
    const why = readModelsOffLog();
    return why === null ? null : new ReadModelsOffLogWriteError(why);
  });
}
