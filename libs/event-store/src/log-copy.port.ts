/**
 * Copying a whole log verbatim from one store to another (`npm run copy-store`): what the port
 * ({@link EventStore}) cannot express, because an append assigns its own revision floor, position
 * and time. A store that can be read or written this way offers {@link EventStore.logCopy}
 * (SQLite and PostgreSQL; not KurrentDB, whose positions, times and deleted streams are its own).
 *
 * Units: revisions and positions are bigint; times are `Date` (ms precision, as {@link RecordedEvent.created}).
 */
import type { RecordedEvent } from './event-store.port';
import type { CopyMarker } from './copy-marker';

/** A deleted stream as the store keeps it: its name and the last revision it had (bigint); appending to it again continues after it. */
export interface DeletedStream {
  stream: string;
  revision: bigint;
}

/** What a store holds, as far as a copy into it is concerned: all zero for an empty store. */
export interface LogContents {
  /** Events stored now (bigint count). */
  events: bigint;
  /** Streams known, live or deleted. */
  streams: bigint;
  /** The highest position ever assigned (bigint, 0n when none). */
  head: bigint;
}

/**
 * What a copy wrote into a store by its committed {@link LogCopy.importEvents} (and {@link LogCopy.importHead}):
 * the positions of the events it inserted, as runs of consecutive positions (`[first, last]`, bigint,
 * ascending, not overlapping), their count, and the highest head it set (0n when none).
 */
export interface CopiedRows {
  runs: readonly (readonly [bigint, bigint])[];
  events: bigint;
  head: bigint;
}

/** What {@link LogCopy.clearCopied} found in a store besides what the copy wrote ({@link CopiedRows}). */
export interface ForeignRows {
  /** Events stored at positions the copy did not write. */
  events: bigint;
  /** Events the copy wrote that are no longer stored (deleted by someone else, e.g. an erasure). */
  missing: bigint;
  /** The store's head (bigint). */
  head: bigint;
  /** The first event not written by the copy (lowest position), when there is one. */
  first?: { position: bigint; stream: string };
}

/**
 * Verbatim reading and writing of a log, for a copy from a store that is not written meanwhile
 * into one that nothing else uses. Not for a running service: the writes bypass the
 * expected-revision checks and the idempotency of {@link EventStore.appendToStream}.
 */
export interface LogCopy {
  /** What the store holds now ({@link LogContents}); sets the schema up first on a store that has none. */
  contents(): Promise<LogContents>;

  /** The copy's mark on this store ({@link CopyMarker}: the table `es_copy_in_progress`), or null when it has none. */
  copyMarker(): Promise<CopyMarker | null>;

  /**
   * Marks this store as the target of a copy in progress (creates `es_copy_in_progress` with the
   * one row `marker`, replacing one there), committed before anything else is written: until
   * {@link unmarkCopyInProgress}, the stores refuse to be used on it (EventStoreCopyInProgressError)
   * unless opened with `acceptCopyInProgress`.
   */
  markCopyInProgress(marker: CopyMarker): Promise<void>;

  /** Removes the mark of {@link markCopyInProgress} (drops the table): the copy is verified. */
  unmarkCopyInProgress(): Promise<void>;

  /** Every deleted stream the store keeps ({@link DeletedStream}), live again or not, ordered by name. */
  deletedStreams(): Promise<DeletedStream[]>;

  /**
   * Writes `events` exactly as given (stream, revision, id, type, data, metadata, position,
   * created), in one transaction, and raises each stream's revision to its last event's. The
   * positions must be strictly increasing and above every position already stored.
   * @throws the store's error (e.g. a UNIQUE violation for an id or a (stream, revision) already stored); nothing written then.
   */
  importEvents(events: readonly RecordedEvent[]): Promise<void>;

  /**
   * Records deleted streams ({@link DeletedStream}): a stream with no live event gets the
   * deleted state at that revision; a live stream keeps its own (later) revision. Afterwards
   * `streamIncarnation` and the next append continue after `revision`, as in the source store.
   */
  importDeletedStreams(deleted: readonly DeletedStream[]): Promise<void>;

  /** Raises the head (the highest position ever assigned) to `position` (bigint): the next append is numbered after it. */
  importHead(position: bigint): Promise<void>;

  /**
   * Removes every event, stream, deleted stream and the copy's mark, and sets the head back to 0n,
   * in one transaction: a partial copy a killed copy left (marked) in a store that was empty
   * before it. Never called on a store in use ({@link otherUsers}).
   */
  clear(): Promise<void>;

  /**
   * Undoes a failed copy into this store (empty before it), but only what the copy wrote: in one
   * transaction that holds off every writer, when the store holds exactly the events of `copied`
   * (one at each of its positions, none elsewhere) and its head is not above `copied.head`, removes
   * everything as {@link clear} does and resolves null; else removes nothing (the copy's rows and mark
   * stay, beside what something else wrote) and resolves what it found ({@link ForeignRows}).
   */
  clearCopied(copied: CopiedRows): Promise<ForeignRows | null>;

  /**
   * Who else uses this store now, one phrase each (empty when no one): PostgreSQL, the other
   * connections to this database named as a service's (`application_name` `session-memory-compaction…`:
   * replicas, their claims, `rebuild-read-models`, another copy-store), not this store's own nor any
   * other program's (psql); SQLite, any other connection holding the file open (a service, another
   * program: SQLite does not tell which), found by taking the file's exclusive lock for a moment without waiting.
   */
  otherUsers(): Promise<string[]>;
}
