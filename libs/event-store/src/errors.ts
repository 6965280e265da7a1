import type { ExpectedRevision } from './event-store.port';
import { COPY_MARKER_TABLE, describeCopyMarker, type CopyMarker } from './copy-marker';

/**
 * The stream's state did not match the append's expected revision. Nothing was written.
 * `actual` is the revision of the stream's last event (bigint) or `'no_stream'`.
 */
export class WrongExpectedRevisionError extends Error {
  override readonly name: string = 'WrongExpectedRevisionError';
  constructor(
    readonly stream: string,
    readonly expected: ExpectedRevision,
    readonly actual: bigint | 'no_stream',
    message = `wrong expected revision on ${stream}: expected ${String(expected)}, actual ${String(actual)}`,
  ) {
    super(message);
  }
}

/**
 * The append was decided in another life of the stream than its current one: it gave
 * `AppendOptions.incarnation` = `expectedIncarnation` (bigint) and the stream's incarnation is
 * `actualIncarnation` (it was deleted since, and maybe written again). Nothing was written. A
 * {@link WrongExpectedRevisionError} (`expected`: the append's expected revision; `actual`: the
 * stream's current revision, or `'no_stream'`), so that a writer that reloads its state and
 * decides again on a revision conflict does so on this refusal too, on the stream's current life.
 */
export class WrongIncarnationError extends WrongExpectedRevisionError {
  override readonly name: string = 'WrongIncarnationError';
  constructor(
    stream: string,
    expected: ExpectedRevision,
    actual: bigint | 'no_stream',
    readonly expectedIncarnation: bigint,
    readonly actualIncarnation: bigint,
  ) {
    super(
      stream,
      expected,
      actual,
      `wrong incarnation of ${stream}: the append was decided in the life starting at revision ${expectedIncarnation}, the stream's current life starts at ${actualIncarnation} (it was deleted since); actual revision ${String(actual)}`,
    );
  }
}

/** An event id already exists in the store with other content (or in another stream). Nothing was written. */
export class DuplicateEventIdError extends Error {
  override readonly name = 'DuplicateEventIdError';
  constructor(
    readonly stream: string,
    readonly eventId: string,
  ) {
    super(`event id ${eventId} already exists in ${stream} with other content`);
  }
}

/**
 * The store cannot be reached or failed for a reason unrelated to the request. Nothing was
 * written, unless `mayHaveBeenWritten` (a write sent whose outcome the store did not tell, e.g.
 * {@link WriteOutcomeUnknownError}): then sending the same write again unchanged settles it.
 */
export class EventStoreUnavailableError extends Error {
  override readonly name: string = 'EventStoreUnavailableError';
  constructor(
    message: string,
    override readonly cause?: unknown,
    /** True when the write was sent and may have been done (the HTTP answer's `mayHaveBeenWritten`). */
    readonly mayHaveBeenWritten = false,
  ) {
    super(message);
  }
}

/**
 * The store was closed (the service is shutting down): the operation was refused, or failed while it
 * waited for a connection, before anything of it was sent. Nothing was written. `store` names the
 * adapter (e.g. `PostgreSQL`).
 */
export class EventStoreClosedError extends EventStoreUnavailableError {
  override readonly name = 'EventStoreClosedError';
  constructor(readonly store: string) {
    super(`the ${store} event store is closed (the service is shutting down): nothing was sent to it`);
  }
}

/**
 * The store's database file `file` is damaged (SQLite reports it corrupt or not a database, or
 * `PRAGMA quick_check` found problems at open: `reason`). The store then refuses every operation:
 * nothing is written into a damaged file. Its message names the file and the remedy: stop the
 * service, restore the file from a backup, or recover what is readable with
 * `sqlite3 <file> .recover` into a new file (https://sqlite.org/recovery.html).
 */
export class EventStoreCorruptError extends EventStoreUnavailableError {
  override readonly name: string = 'EventStoreCorruptError';
  constructor(
    readonly file: string,
    readonly reason: string,
    cause?: unknown,
  ) {
    super(
      `the event store file ${file} is damaged (${reason}): nothing more is written to it; stop the service and restore ${file} from a backup, or recover what is readable with sqlite3 ${file} ".recover" into a new file and put that in its place (remove the -wal and -shm files next to it)`,
      cause,
    );
  }
}

/**
 * The store's database file `file` was replaced or removed while the store had it open
 * (`change`: e.g. a backup moved onto its path by `mv`, or the file deleted): the open connection
 * still reads and writes the old file, now unlinked, so a write acknowledged there would be lost at
 * stop, and another process opening the path (a replica sharing it, this service's writer thread
 * restarted) would fork the log. Handled as a damaged file is (the store refuses every operation
 * from then on, 503 `store_corrupt`); its message says to restart the service, which opens the file
 * now at the path (a restore stops the service first: docs/stores.md "Backup and restore"), and names the
 * replaced file's `-wal` and `-shm` files `setAside` (paths) when they were renamed out of its way.
 */
export class EventStoreReplacedError extends EventStoreCorruptError {
  override readonly name: string = 'EventStoreReplacedError';
  constructor(
    file: string,
    change: string,
    /** The paths of the replaced file's `-wal` and `-shm` files, renamed out of the way (none when there were none, or only those changed). */
    readonly setAside: readonly string[] = [],
  ) {
    super(file, change);
    const aside =
      setAside.length > 0
        ? ` (the replaced file's ${setAside.map((name) => name.slice(name.lastIndexOf('/') + 1)).join(' and ')} were set aside, so the restart opens the file now there as it is)`
        : '';
    this.message = `the event store file ${file} was replaced or removed while the service ran (${change}): nothing more is written, here or in the file now at that path; restart the service to open the file at ${file}${aside} (to restore a backup, stop the service first, then put the backup in place)`;
  }
}

/**
 * A write (`write`: an `append` to `stream`, or its `deletion`) was sent to the store (`store`,
 * e.g. `PostgreSQL event store`) and its connection ended before the answer arrived, and the store
 * could not be reached again within `withinMs` (ms) to learn whether it was done: it may have been
 * done, or not. Unlike its base class, this does not mean that nothing was written. Sending the
 * same write again settles it: an append with the same event ids and expected revision is answered
 * as the original when it was written, and written now when it was not.
 */
export class WriteOutcomeUnknownError extends EventStoreUnavailableError {
  constructor(
    store: string,
    readonly write: 'append' | 'deletion',
    readonly stream: string,
    readonly withinMs: number,
    cause?: unknown,
  ) {
    const sent = write === 'append' ? `the append to ${stream}` : `the deletion of ${stream}`;
    super(
      `${store}: the connection was lost after ${sent} was sent, before the server's answer, and the server could not be reached again within ${withinMs} ms to find out whether it was done, so it may have been written or not: send the same ${write} again unchanged (${write === 'append' ? 'with the same event ids it is answered as the original when it was written, and written now when it was not' : 'it is answered as done when it was'})${cause instanceof Error ? `; the connection: ${cause.message}` : ''}`,
      cause,
      true,
    );
  }
}

/**
 * The PostgreSQL database cannot hold the service's text: its encoding (`encoding`, PostgreSQL's
 * `server_encoding`, e.g. `LATIN1`, `SQL_ASCII`) is not `UTF8`. Events carry any Unicode text (every
 * language, emoji), and the service itself writes characters outside Latin-1 (the extractive
 * summary's `…`), so on such a database appends of those texts and every summarizing compaction would
 * fail. Refused when the schema is set up (at start), never retried: create the database with
 * `ENCODING 'UTF8'` (`createdb -E UTF8 -T template0 <name>`) and point `DATABASE_URL` at it.
 */
export class EventStoreDatabaseEncodingError extends Error {
  override readonly name = 'EventStoreDatabaseEncodingError';
  constructor(readonly encoding: string) {
    super(`the database's encoding is ${encoding}, not UTF8: the service stores Unicode text (any language, emoji), which ${encoding} cannot hold`);
  }
}

/**
 * A table the PostgreSQL store needs (`es_events`, `es_streams`, `es_head`, `es_schema`) exists in
 * the database but is not the service's: a column it needs is missing or of another type (another
 * application's table of the same name). The store refuses the database before creating or
 * changing anything in it. `table` names it; the message says what differs.
 */
export class EventStoreSchemaMismatchError extends Error {
  override readonly name = 'EventStoreSchemaMismatchError';
  constructor(
    readonly table: string,
    readonly mismatch: string,
  ) {
    super(`the table ${table} in the database is not this service's: ${mismatch} (another application's table of the same name?)`);
  }
}

/**
 * The PostgreSQL store's `es_events` holds events past its head (`es_head`): the head row was not
 * restored with them, as when `pg_restore` ran into a database where a start had already created
 * the schema (the dump's `es_head` row collides with the one created, `duplicate key`, and the
 * restore keeps going). Appends would take positions the log already holds. The store refuses the
 * database before creating or changing anything in it (newcomer ncpg73 F3). `head` is `es_head`'s
 * position (0n when the row is missing), `last` the highest position in `es_events` (bigints).
 */
export class EventStoreHeadBehindError extends Error {
  override readonly name = 'EventStoreHeadBehindError';
  constructor(
    readonly head: bigint,
    readonly last: bigint,
  ) {
    super(
      `the event store's tables hold events up to position ${last}, but its head (es_head) is at position ${head}: a pg_restore collided with a schema created before it (its es_head row was not restored), so the log is not empty but incomplete or inconsistent`,
    );
  }
}

/**
 * The store's schema was set up by a newer build than this one (its recorded version is higher
 * than this build knows): this build refuses to use it rather than misread or overwrite it. Start
 * a build at least as new as the one that set it up. Only builds that record and check the version
 * (PostgreSQL schema version 2 on) can refuse; older builds do not know of it.
 */
export class EventStoreSchemaNewerError extends Error {
  override readonly name = 'EventStoreSchemaNewerError';
  constructor(
    readonly found: number,
    readonly known: number,
    where: string,
  ) {
    super(
      `${where} holds event store schema version ${found}, newer than this build knows (${known}): a newer build set it up; start a build at least that new (rolling back past a schema change is not supported)`,
    );
  }
}

/**
 * The store refused appends as a wrong expected revision although its own reads, right after each
 * refusal, showed the stream at exactly the expected revision (`expected`; `actual`: what the
 * refusal claimed), `times` times in a row. No other writer moved the stream: the store's append
 * check and its reads disagree (on PostgreSQL, e.g. a database function this build depends on was
 * replaced). Nothing was written. A fault of the store, not of the request.
 */
export class StoreAnswerContradictionError extends Error {
  override readonly name = 'StoreAnswerContradictionError';
  constructor(
    readonly stream: string,
    readonly expected: ExpectedRevision,
    readonly actual: bigint | 'no_stream',
    readonly times: number,
  ) {
    super(
      `the event store refused ${times} appends to ${stream} in a row as a wrong expected revision (expected ${String(expected)}, it said ${String(actual)}) while its own reads showed the stream at ${String(expected)}: its append check and its reads disagree (no other writer moved the stream); nothing was written. Check the store: on PostgreSQL, whether something replaced this build's database functions`,
    );
  }
}

/**
 * The store (`where`, e.g. `the PostgreSQL database (DATABASE_URL)` or a SQLite file's path) holds
 * the mark of a copy by `npm run copy-store` that has not finished and been verified (the table
 * `es_copy_in_progress`, {@link CopyMarker}): the copy was killed, failed without emptying it, or
 * still runs, so its log may be partial. The SQLite and PostgreSQL stores refuse to be used on it
 * (at open, or at the schema set-up), nothing read or written. Run the copy again with
 * `--empty-partial-target`, or drop the database (delete the file).
 */
export class EventStoreCopyInProgressError extends Error {
  override readonly name = 'EventStoreCopyInProgressError';
  constructor(
    readonly where: string,
    readonly marker: CopyMarker,
  ) {
    super(
      `${where} holds a partial copy: its table ${COPY_MARKER_TABLE} says ${describeCopyMarker(marker)} and has not finished and verified it (the copy was killed, or still runs), so its log may be incomplete and is not used`,
    );
  }
}
