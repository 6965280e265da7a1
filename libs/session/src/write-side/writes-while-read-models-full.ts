/**
 * Writes are refused while the read models cannot be written for want of space or because their file's I/O fails (the
 * projector's `readModelsFull`): an append the store took then would be acknowledged although no read could
 * show it (reads wait for this process's acknowledged writes, see {@link AcknowledgedPositions}),
 * and the log would run ahead of the read models for as long as the disk stays full. The default
 * layout keeps `events.sqlite` and `read-models.sqlite` on one file system, and the event store can
 * often still take appends in free pages of its file after the read models' file met the full
 * disk. Refused writes answer 503 `store_unavailable` (nothing written); the refusal ends, without
 * a restart, at the projector's first batch that commits once space is freed.
 */
import { EventStoreUnavailableError, type EventStore } from '@lib/event-store';
import { unwritableForFullDisk } from '../read-side/session-projector';
import { refusingWritesWhile } from './writes-refused-while';

/**
 * A write refused because the read models cannot be written: their disk is full (the cause's code is `SQLITE_FULL`), or their
 * file's I/O fails (`SQLITE_IOERR`: a file-size limit, a quota, a failing disk).
 */
export class ReadModelsFullError extends EventStoreUnavailableError {
  /** Whether the read models' disk is full (else their file's I/O fails). */
  readonly diskFull: boolean;
  /** `why`: the projector's `readModelsFull` (the file, the error, the remedy). */
  constructor(why: string) {
    const diskFull = unwritableForFullDisk(why);
    super(
      `${why}; writes are refused until then (nothing written)`,
      diskFull
        ? Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' })
        : Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR' }),
    );
    this.diskFull = diskFull;
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
