/**
 * The event store port (DESIGN §2.1), modelled on KurrentDB so that its adapter stays thin.
 *
 * Units: stream revisions and global positions are `bigint`. A stream's first event has
 * revision 0n. Global positions are strictly increasing across the whole store (they need not
 * be contiguous: KurrentDB commit positions are byte offsets). Positions given to reads and
 * subscriptions are exclusive checkpoints: "everything after this position".
 */
import type { HeldClaim } from './claim.port';
import type { LogCopy } from './log-copy.port';

/**
 * The expected state of a stream for an append:
 * - `'any'`: no check;
 * - `'no_stream'`: the stream must not exist yet;
 * - `'stream_exists'`: the stream must have at least one event;
 * - a `bigint`: the revision of the stream's last event must be exactly this.
 */
export type ExpectedRevision = 'any' | 'no_stream' | 'stream_exists' | bigint;

/** An event to append. `id` is a UUID chosen by the caller (the idempotency key). */
export interface EventData {
  /** UUID (RFC 4122 text form). Appending the same id again is idempotent (see appendToStream). */
  id: string;
  /** Event type name, e.g. `UserMessageAppended`. */
  type: string;
  /** JSON-serialisable payload. */
  data: unknown;
  /**
   * True when `data` is a value as `JSON.parse` gives one, so that parsing its JSON text gives it back
   * (plain objects and arrays, strings, finite numbers, booleans, null; no class instance nor
   * `toJSON`; a member undefined, which its text leaves out, must read as absent to every reader),
   * and it is not changed after the append: a reader of the log may then be given this very value
   * instead of one parsed from the stored text (the SQLite store answers so the first read of an
   * event it just committed, saving the parse of a large payload the projector reads right after
   * the commit). Never written.
   */
  dataIsParsedJson?: boolean;
  /** JSON-serialisable metadata, or undefined. */
  metadata?: unknown;
  /**
   * Ids (UUIDs) an earlier build gave this same event (`deterministicEventIdForms` after the first):
   * an event stored under one of them in this stream's current life is this event, so resending
   * it is idempotent as with `id` (nothing written, the original result answered), whatever build
   * wrote it. Never written. Stores that keep no erased event (SQLite, PostgreSQL) look them up;
   * the KurrentDB adapter ignores them.
   */
  formerIds?: readonly string[];
}

/** An event as stored. */
export interface RecordedEvent {
  id: string;
  type: string;
  data: unknown;
  metadata: unknown;
  streamId: string;
  /** Revision within its stream (0n-based). */
  revision: bigint;
  /** Global position in the store's log (strictly increasing). */
  position: bigint;
  /**
   * When the store recorded the event (ms precision), from one clock per store read while the
   * append holds the store's write order: it never decreases in `position` order while that clock
   * does not go back (SQLite: the writing process's wall clock inside the write transaction;
   * PostgreSQL: the server's `clock_timestamp()` at the insert, under the head lock; KurrentDB: the
   * leader's clock as its writer writes the event). Readers may ask "at or after" the newest time
   * they saw and miss nothing (the contract checks it under concurrent writers).
   */
  created: Date;
}

/** What an append returns. */
export interface AppendResult {
  /** Revision of the last event now in the stream (pass it as the next expected revision). */
  nextExpectedRevision: bigint;
  /** Global position of the last event written by this append. */
  position: bigint;
}

/** Options of {@link EventStore.appendToStream}. */
export interface AppendOptions {
  /** Default `'any'`. */
  expectedRevision?: ExpectedRevision;
  /**
   * The life of the stream the append was decided in: its incarnation (bigint, see
   * {@link EventStore.streamIncarnation}) when the writer loaded its state. When given, the store
   * writes only while the stream is still in that life, checked atomically with the write and with
   * `expectedRevision`: when the stream was deleted since (and maybe written again), nothing is
   * written and the append raises {@link WrongIncarnationError}, whatever `expectedRevision` says
   * (`'any'` and `'stream_exists'` included, which alone accept a stream written again after a
   * deletion). Default: no check of the life. SQLite and PostgreSQL check it in the append's
   * transaction; the KurrentDB adapter reads the incarnation just before the append (not atomic).
   */
  incarnation?: bigint;
}

/** Options of {@link EventStore.deleteStream}. */
export interface DeleteStreamOptions {
  /**
   * Delete only when the stream's last event is at this revision (bigint); otherwise nothing is
   * deleted and the call raises WrongExpectedRevisionError (`actual`: the revision, or `no_stream`).
   * Default: delete whatever the stream holds.
   */
  expectedRevision?: bigint;
}

/** Options of {@link EventStore.readStream}. Revisions are bigint. */
export interface ReadStreamOptions {
  /** First revision to read (inclusive). Default: start when forwards, end when backwards. */
  fromRevision?: bigint | 'start' | 'end';
  /** Default `'forwards'`. */
  direction?: 'forwards' | 'backwards';
  /** Maximum number of events returned. Default: no limit. */
  maxCount?: number;
  /**
   * The last revision to read (inclusive) in the read's direction: forwards, no event after it;
   * backwards, none before it. Default: no bound. A caller that knows where its read ends says so,
   * and the store reads that range only: PostgreSQL, whose statistics may count a stream's events
   * far too low (a growing stream, or many streams), otherwise reads every event of the stream
   * from `fromRevision` on (a bitmap scan, then a sort keeping `maxCount`), so a page read at an
   * old revision of a long stream cost in proportion to the stream's length.
   */
  toRevision?: bigint;
}

/** Options of {@link EventStore.readAll}. Positions are bigint, exclusive. */
export interface ReadAllOptions {
  /** Exclusive: events with a global position greater than this. Default: from the beginning. */
  fromPosition?: bigint;
  /** Maximum number of events returned. Default 4096. */
  maxCount?: number;
  /** Only streams whose name starts with this prefix (e.g. `session-`). */
  streamPrefix?: string;
}

/** Options of {@link EventStore.subscribeToAll}. Positions are bigint, exclusive. */
export interface SubscribeOptions {
  /** Exclusive checkpoint: deliver events after this position. Default: from the beginning. */
  fromPosition?: bigint;
  /** Only streams whose name starts with this prefix (e.g. `session-`). */
  streamPrefix?: string;
}

/**
 * A live subscription to the global log: catch-up first, then live events, in global order,
 * each event once. Iterate with `for await`; call `close()` to stop (the iterator then ends).
 */
export interface Subscription extends AsyncIterable<RecordedEvent> {
  close(): Promise<void>;
}

/** A connection pool's state at one moment (counts of connections, or of requests for one). */
export interface PoolConnections {
  /** Connections open or being opened (at most the pool's size, `DATABASE_POOL_SIZE`). */
  total: number;
  /** Of those, the ones no statement uses now. */
  idle: number;
  /** Requests waiting for a connection (all `total` busy and the pool full, or a connection still opening). */
  waiting: number;
}

/** The port. Every method may reject with {@link EventStoreUnavailableError} when the store cannot be reached. */
export interface EventStore {
  /**
   * Appends `events` atomically (all or none) to `stream`.
   *
   * Idempotency: when every id of `events` is already the stream's events written by one earlier
   * append at the same expected revision, with identical type and data, nothing is written and the
   * original result is returned.
   *
   * @throws WrongExpectedRevisionError when the stream's state does not match `expectedRevision`.
   * @throws WrongIncarnationError (a WrongExpectedRevisionError) when `options.incarnation` is given
   *   and is not the stream's current incarnation.
   * @throws DuplicateEventIdError when an id already exists with other content (or elsewhere).
   */
  appendToStream(stream: string, events: EventData[], options?: AppendOptions): Promise<AppendResult>;

  /** Reads a stream. A stream that does not exist reads as `[]`. */
  readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;

  /** Reads the global log forwards after `fromPosition`. */
  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]>;

  /**
   * The event at exactly global position `position` (bigint), or `null` when the log holds none
   * there: a position past the head, between two events (KurrentDB's positions are not
   * contiguous), of a deleted event (SQLite and PostgreSQL delete the rows; KurrentDB keeps
   * soft-deleted events in `$all` until a scavenge and returns them), or of a system event. One
   * read; used to check that a checkpoint was taken on this log (e.g. not on a store since
   * restored from an older backup and written again).
   */
  eventAt(position: bigint): Promise<RecordedEvent | null>;

  /** The revision of the stream's last event, or `null` when the stream does not exist (or was deleted). */
  streamRevision(stream: string): Promise<bigint | null>;

  /**
   * The stream's incarnation: the revision (bigint) at which its current life starts. That is the
   * revision of its first event when it exists; otherwise the revision its next append will get:
   * 0n for a stream never written, the last deleted revision + 1n after a deletion (revisions are
   * never reused, see {@link EventStore.deleteStream}). So it is 0n for every stream never deleted,
   * stays the same for every append within one life of the stream, and differs after each
   * deletion: `deterministicEventId` folds it into event ids, so that a stream erased and written
   * again never derives the ids of its erased events (KurrentDB would take those for a replay).
   */
  streamIncarnation(stream: string): Promise<bigint>;

  /**
   * The global position of the last event in the store, or 0n when it is empty. SQLite and
   * PostgreSQL: the highest position ever assigned, so it still counts the events of a stream
   * deleted since (a log may end with deleted events: an erasure interrupted after its stream
   * deletion, before its record). It may count events this store object cannot read yet (see
   * {@link EventStore.readableHead}).
   */
  headPosition(): Promise<bigint>;

  /**
   * The readable head: a global position P (bigint, 0n for an empty log) up to which the log is
   * complete for this store object's readers: every event at or below P that will ever exist is
   * already visible to its {@link EventStore.readAll} (and its subscriptions), now and from then
   * on. Unlike {@link EventStore.headPosition} it never counts an event that is committed but not
   * yet readable here, so P ≤ a `headPosition()` read after it.
   *
   * What it is for: a follower at exclusive checkpoint C < P whose `readAll({ fromPosition: C })`,
   * called after this answered, returns no event at or below P may take P as its checkpoint without
   * ever skipping an event (the positions in between are deleted events, or unused): see
   * `headToSkipTo`. A `headPosition()` does not allow that: on SQLite with the writer thread it
   * counts a batch the thread committed whose answer has not arrived, which `readAll` does not
   * return yet.
   * @throws EventStoreUnavailableError as every method.
   */
  readableHead(): Promise<bigint>;

  /** Subscribes to the global log (catch-up then live). See {@link Subscription}. */
  subscribeToAll(options?: SubscribeOptions): Subscription;

  /**
   * Deletes a stream and its content (erasure). Afterwards reads return `[]` and `streamRevision`
   * returns null. Appending again to a deleted stream is allowed (`no_stream` holds) and continues
   * after its last deleted revision, in every store (KurrentDB's soft delete does so; SQLite and
   * PostgreSQL keep the stream's name and last revision for it): revisions of a stream are never
   * reused, so a writer that decided on the deleted stream's state at revision R is refused by
   * the expected-revision check even when the stream was written again up to R. Deleting a stream
   * that does not exist does nothing, unless `options.expectedRevision` is given.
   * @throws WrongExpectedRevisionError when `options.expectedRevision` is not the stream's revision (nothing deleted).
   */
  deleteStream(stream: string, options?: DeleteStreamOptions): Promise<void>;

  /**
   * Whether the store takes a write now, without changing what it holds: resolves when it does;
   * rejects with {@link EventStoreUnavailableError} (the error a write would get) when it does not.
   * Cheap (one write transaction, not waiting for locks held by others: a lock held is a
   * rejection), meant to be called every few seconds while writes fail, to learn when they work
   * again. It tells whether the write lock can be had, on PostgreSQL whether the server takes
   * writes (not a standby; rolled back), on SQLite whether a one-page commit works (the file's
   * `user_version` rewritten: a file-size limit, a quota or a failing disk fails it) and its file
   * system has some room left. Optional: a store without it (KurrentDB) is not probed.
   */
  probeWrite?(): Promise<void>;

  /**
   * The store's connection pool now ({@link PoolConnections}), read from memory (no I/O, never
   * throws). Optional: a store without a pool of connections of its own (SQLite, KurrentDB) has none.
   */
  poolConnections?(): PoolConnections;

  /**
   * Verbatim reading and writing of the whole log, for `npm run copy-store` ({@link LogCopy}):
   * never for a store a service uses meanwhile. Optional: SQLite and PostgreSQL have it, KurrentDB not.
   */
  logCopy?(): LogCopy;

  /**
   * Claims `name` (any text) for this process across every process sharing the store, without
   * waiting: resolves the held claim ({@link HeldClaim}), or null when another process holds it
   * now. The claim lasts until `release()`, or until the connection holding it is lost (the
   * process ended or crashed, the server restarted, the network dropped): it is never left held by
   * a process that is gone. A name is held once in a process too: while this store holds it, a
   * second `tryClaim` of it through the same store resolves null. Advisory, for work that stays correct when done twice (see claim.port.ts).
   * Held once among every store of this process too (SQLite: any store instance on the file).
   * Optional: PostgreSQL has it (a session-level advisory lock on one dedicated connection); SQLite
   * on a file has it (several processes may share the file: SQLite's exclusive lock on a lock file
   * of the name beside it, on a connection of its own, see sqlite-claims.ts); an in-memory SQLite
   * store (private to its process) and KurrentDB (no locks) have none.
   * @throws EventStoreUnavailableError when the store cannot be asked (nothing claimed).
   */
  tryClaim?(name: string): Promise<HeldClaim | null>;

  /**
   * Removes what the store keeps for the claim `name` once what it guarded is gone (an erased
   * session), so that nothing of it is left behind: SQLite deletes the claim's lock file (its name
   * is a hash of the claim's name, which a guess of a session id could be checked against). A claim
   * held meanwhile is released by its holder as usual, and a claim of the name taken before that
   * may be granted (a new lock file): advisory, and a pass of the erased life is abandoned anyway.
   * Never rejects. Optional: only SQLite keeps anything per claim.
   */
  forgetClaim?(name: string): Promise<void>;

  /** Releases connections and file handles. */
  close(): Promise<void>;
}
