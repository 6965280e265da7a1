/**
 * Writes are refused while the read models cannot be written for want of space (the projector's
 * `readModelsFull`): an append the store took then would be acknowledged although no read could
 * show it (reads wait for this process's acknowledged writes, see {@link AcknowledgedPositions}),
 * and the log would run ahead of the read models for as long as the disk stays full. The default
 * layout keeps `events.sqlite` and `read-models.sqlite` on one file system, and the event store can
 * often still take appends in free pages of its file after the read models' file met the full
 * disk. Refused writes answer 503 `store_unavailable` (nothing written); the refusal ends, without
 * a restart, at the projector's first batch that commits once space is freed.
 */
import { EventStoreUnavailableError, type EventStore } from '@lib/event-store';
import { refusingWritesWhile } from './writes-refused-while';

/** A write refused because the read models cannot be written: their disk is full (the cause's code is `SQLITE_FULL`). */
export class ReadModelsFullError extends EventStoreUnavailableError {
  /** `why`: the projector's `readModelsFull` (the file, the error, the remedy). */
  constructor(why: string) {
    super(`${why}; writes are refused until then (nothing written)`, Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' }));
  }
}

/**
 * `store`, whose `appendToStream` and `deleteStream` throw {@link ReadModelsFullError} without
 * writing while `readModelsFull()` (the projector's) answers why the read models cannot be
 * written; every other method, and every write otherwise, is `store`'s own.
 */
export function refusingWritesWhileReadModelsFull(store: EventStore, readModelsFull: () => string | null): EventStore {
  return refusingWritesWhile(store, () => {
    const why = readModelsFull();
    return why === null ? null : new ReadModelsFullError(why);
  });
}
