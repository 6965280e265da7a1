import type Database from 'better-sqlite3';
import { prepareAppend } from '../append-input';
import { MAX_REVISION } from '../revision-text';
import {
  EventStoreCopyInProgressError,
  EventStoreCorruptError,
  EventStoreReplacedError,
  EventStoreSchemaNewerError,
  EventStoreUnavailableError,
} from '../errors';
import type {
  AppendOptions,
  DeleteStreamOptions,
  AppendResult,
  EventData,
  EventStore,
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
  SubscribeOptions,
  Subscription,
} from '../event-store.port';
import type { LogCopy } from '../log-copy.port';
import type { HeldClaim } from '../claim.port';
import { PollingSubscriptions } from '../polling-subscriptions';
import { recordedFromRow } from '../recorded-from-row';
import { SqliteAppender, type SqliteAppendResult } from './sqlite-append';
import { SqliteClaims } from './sqlite-claims';
import { SqliteLogCopy } from './sqlite-log-copy';
import { readSqliteCopyMarker } from './sqlite-copy-marker';
import { SqliteRecentEvents } from './sqlite-recent-events';
import { openSqliteDatabase } from './sqlite-database';
import { SqliteGroupCommit, type OperationOutcome } from './sqlite-group-commit';
import { isSqliteCorrupt, isSqliteDiskFull, toStoreError } from './sqlite-errors';
import { sqliteQuickCheck } from './sqlite-quick-check';
import { SqliteWalPurge, type PendingWalScrub, type WalPurgeRetry, type WalScrubbed } from './sqlite-wal-purge';
import { freezeShared } from '../shared-value-freeze';
import { SqliteFileIdentity, type FileChange } from './sqlite-file-identity';
import { probeSqliteWrite } from './sqlite-write-probe';
import { SqliteWriterThread } from './sqlite-writer-client';
import { commitSqliteWrites, type SqliteWrite, type SqliteWriteResult } from './sqlite-writes';

/** Options of {@link SqliteEventStore.open}. */
export interface SqliteEventStoreOptions {
  /** How long (ms) a write waits for another process's write lock before failing with EventStoreUnavailableError. Default 5000. */
  busyTimeoutMs?: number;
  /** How often (ms) an idle live subscription re-reads the file to see appends of other processes. Default 100. */
  pollIntervalMs?: number;
  /**
   * Group commit (default true): appends made in the same event-loop turn share one transaction
   * (one fsync), each inside its own SAVEPOINT so it keeps its own check and all-or-nothing effect.
   * false: one transaction per append.
   */
  groupCommit?: boolean;
  /** Most operations in one group-commit transaction. Default 256. */
  maxBatchSize?: number;
  /** Events per page when a subscription catches up. Default 512. */
  subscriptionPageSize?: number;
  /**
   * Run write transactions in a worker thread with its own connection (default false), so that
   * their fsyncs and the SQLite work of an append do not block this thread's event loop; reads
   * stay on this thread's connection and see every write once its promise resolved. While a batch
   * is in the thread, reads of the global log stop at what was committed before it was handed over
   * (see {@link SqliteEventStore.readAll}). The thread starts with the first write and ends with
   * {@link SqliteEventStore.close}. Ignored for `':memory:'` (a second connection would be another
   * database).
   */
  writerThread?: boolean;
  /**
   * Run `PRAGMA quick_check` on the file at open (default false): a damaged file is refused with
   * {@link EventStoreCorruptError} instead of being written into. Reads every page once (2.4 s for
   * a 258 MiB file on 2 cores at load 18; count up to ~15 s per GiB on a busy machine).
   */
  quickCheck?: boolean;
  /** Told when the quick check starts (`ms` undefined) and ends (`ms`: how long it took), with the file's size in bytes. */
  onQuickCheck?: (progress: { file: string; bytes: number; ms?: number }) => void;
  /**
   * How a WAL checkpoint after an erasure that another connection's open read refused is retried
   * ({@link SqliteWalPurge}): on an unref'd timer, 100 ms doubling up to 2 s by default, until it
   * succeeds. `false`: only after the next transaction and on close.
   */
  walPurgeRetry?: WalPurgeRetry | false;
  /**
   * Open a file that holds a copy's mark (`es_copy_in_progress`, see copy-marker.ts) too (default
   * false: refused with EventStoreCopyInProgressError). Only `npm run copy-store`, on its target.
   */
  acceptCopyInProgress?: boolean;
}

/** The highest position SQLite can assign (a read limit that limits nothing). */
const MAX_POSITION = 9_223_372_036_854_775_807n;

interface Row {
  position: bigint;
  stream: string;
  revision: bigint;
  id: string;
  type: string;
  data: string;
  metadata: string | null;
  created: bigint;
}

interface PendingOp {
  write: SqliteWrite;
  /**
   * An append's events' data as given, for those marked `dataIsParsedJson` (held for the first read
   * of the log, {@link SqliteRecentEvents.appended}); never sent to the writer thread.
   */
  given?: ReadonlyArray<{ data: unknown } | undefined>;
  resolve: (value: SqliteWriteResult) => void;
  reject: (error: unknown) => void;
}

/**
 * The embedded event store: one SQLite file (better-sqlite3), WAL journal, `synchronous=FULL`
 * (an acknowledged append survives a crash or power loss of this machine). Several OS processes
 * may share the file: appends take the write lock with `BEGIN IMMEDIATE`, so the expected-revision
 * check and the insert are atomic across processes; a process waits up to `busyTimeoutMs` for it.
 *
 * Positions are the `events.position` column (bigint, strictly increasing, never reused, 1n-based;
 * gaps appear after deletions). Revisions are bigint, 0n-based. Schema: see sqlite-schema.ts.
 *
 * Erasure on disk: `secure_delete` is on, so deleted rows are overwritten with zeros in the
 * database file (their cells and the pages freed), and after each transaction that deleted a
 * stream the WAL is checkpointed with TRUNCATE, so it holds no older copy of those pages. A
 * checkpoint that another connection's open read prevents (e.g. a `sqlite3 .backup` of the running
 * service) is retried on a timer until it succeeds ({@link SqliteEventStoreOptions.walPurgeRetry}),
 * after the next transaction and on close; {@link pendingWalScrub} tells it meanwhile.
 * Note: better-sqlite3 is synchronous, so each transaction blocks the event loop while it runs
 * (including the fsync and any wait for another process's lock), unless `writerThread` moves the
 * transactions to a worker thread (reads still run on the calling thread).
 */
export class SqliteEventStore implements EventStore {
  private readonly appender: SqliteAppender;
  private readonly queue: PendingOp[] = [];
  private flushScheduled = false;
  /** Batches handed to the writer thread and not yet answered. */
  private inFlight = 0;
  /**
   * While {@link inFlight} batches: the highest position `readAll` reads up to (bigint). The log's
   * head when the first of them was handed over, raised by each append answered since: always the
   * end of an append, and everything up to it is committed and known to this thread. Never lower
   * than a {@link readableHead} answered before (it raises it while no batch is in flight).
   */
  private inFlightReadLimit = 0n;
  private closed = false;
  private readonly subscriptions: PollingSubscriptions;
  /** This instance's latest commits, for reads of the global log right after them. */
  private readonly recent = new SqliteRecentEvents();
  private readonly stmts: ReturnType<SqliteEventStore['prepareStatements']>;
  private readonly groupCommit: boolean;
  private readonly maxBatchSize: number;
  private readonly group: SqliteGroupCommit;
  private readonly walPurge: SqliteWalPurge;
  /** Whether transactions run in the writer thread ({@link SqliteEventStoreOptions.writerThread}). */
  private readonly useWriterThread: boolean;
  /** The writer thread, started by the first write (an idle store holds no thread) and again after a failure. */
  private writerThread: SqliteWriterThread | undefined;
  private readonly busyTimeoutMs: number;
  /** What changed at the store's path, once {@link assertSameFile} found it (from then on every operation is refused). */
  private replaced: FileChange | undefined;
  /** Set by the first error saying the file is damaged: from then on every operation is refused with it. */
  private corruption: EventStoreCorruptError | null = null;
  private readonly corruptionListeners: Array<(error: EventStoreCorruptError) => void> = [];
  /** The file its path named at open, checked before each operation and batch of writes ({@link assertSameFile}); null for `':memory:'`. */
  private readonly identity: SqliteFileIdentity | null;
  /** {@link tryClaim}'s lock files, or null for `':memory:'` (no claims). */
  private readonly claims: SqliteClaims | null;
  /**
   * See {@link EventStore.tryClaim}: SQLite's exclusive lock on a lock file of the name beside the
   * store file, on a connection of its own ({@link SqliteClaims}): at most one holder among every
   * process sharing the file and every store of this process, dropped by the OS with a process
   * that is gone. Undefined for `':memory:'` (a private store: every pass runs unclaimed).
   */
  readonly tryClaim?: (name: string) => Promise<HeldClaim | null>;
  /** See {@link EventStore.forgetClaim}: deletes the claim's lock file ({@link SqliteClaims.forget}). Undefined for `':memory:'`. */
  readonly forgetClaim?: (name: string) => Promise<void>;

  private constructor(
    private readonly db: Database.Database,
    options: SqliteEventStoreOptions,
  ) {
    this.groupCommit = options.groupCommit ?? true;
    this.maxBatchSize = Math.max(1, options.maxBatchSize ?? 256);
    this.subscriptions = new PollingSubscriptions((o) => this.readAll(o), options.pollIntervalMs ?? 100, options.subscriptionPageSize ?? 512);
    this.appender = new SqliteAppender(db);
    this.group = new SqliteGroupCommit(db);
    this.walPurge = new SqliteWalPurge(db, options.walPurgeRetry === false ? null : (options.walPurgeRetry ?? {}));
    this.stmts = this.prepareStatements();
    this.useWriterThread = options.writerThread === true && db.name !== ':memory:';
    this.busyTimeoutMs = busyTimeoutOf(options);
    this.claims = db.name === ':memory:' ? null : new SqliteClaims(db.name);
    this.identity = SqliteFileIdentity.of(db.name);
    if (this.claims) {
      const claims = this.claims;
      this.tryClaim = (name) => claims.tryClaim(name);
      this.forgetClaim = async (name) => claims.forget(name);
    }
  }

  /**
   * Opens (creating the file, its parent directories and the schema when missing) the store at
   * `filePath` (`':memory:'` gives a private in-memory store, for tests).
   * With `quickCheck`, runs `PRAGMA quick_check` first ({@link SqliteEventStoreOptions.quickCheck}).
   * @throws EventStoreCorruptError naming the file when it is damaged (SQLite says so, or the quick check found problems).
   * @throws EventStoreUnavailableError when the file cannot be opened (saying so when its disk is full).
   * @throws EventStoreCopyInProgressError when the file holds a copy's mark (a partial copy), unless `acceptCopyInProgress`.
   */
  static open(filePath: string, options: SqliteEventStoreOptions = {}): SqliteEventStore {
    let db: Database.Database;
    try {
      db = openSqliteDatabase(filePath, busyTimeoutOf(options));
    } catch (error) {
      throw openError(filePath, error);
    }
    try {
      const marker = options.acceptCopyInProgress ? undefined : readSqliteCopyMarker(db);
      if (marker !== undefined) throw new EventStoreCopyInProgressError(`the SQLite event store ${filePath}`, marker);
      if (options.quickCheck && filePath !== ':memory:') {
        const problems = sqliteQuickCheck(db, (progress) => options.onQuickCheck?.({ file: filePath, ...progress }));
        if (problems.length > 0) throw new EventStoreCorruptError(filePath, `PRAGMA quick_check: ${problems.join('; ')}`);
      }
      return new SqliteEventStore(db, options);
    } catch (error) {
      db.close();
      throw openError(filePath, error);
    }
  }

  /**
   * Calls `listener` once, when the store first meets an error saying its file is damaged (from
   * then on it refuses every operation with that error), e.g. to log one line.
   */
  reportCorruption(listener: (error: EventStoreCorruptError) => void): void {
    this.corruptionListeners.push(listener);
  }

  /**
   * Counters since open: committed write transactions and the operations (appends, deletes,
   * including rejected ones) they carried. operations / transactions is the group-commit factor.
   */
  get stats(): { transactions: number; operations: number } {
    return (this.writerThread ?? this.group).stats;
  }

  /** The path of the database file. */
  get filePath(): string {
    return this.db.name;
  }

  /**
   * See {@link EventStore.appendToStream}. Resolves once the transaction holding the append is
   * committed (durable). `options.incarnation` is checked in that transaction, before the
   * expected revision (`SqliteAppender.append`).
   */
  appendToStream(stream: string, events: EventData[], options: AppendOptions = {}): Promise<AppendResult> {
    const expected = options.expectedRevision ?? 'any';
    const { incarnation } = options;
    let serialized;
    try {
      this.assertOpen();
      serialized = prepareAppend(stream, events, expected, incarnation);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.enqueue(
      {
        kind: 'append',
        stream,
        events: serialized,
        expected,
        ...(incarnation === undefined ? {} : { incarnation }),
      },
      events.map((e) => (e.dataIsParsedJson === true ? { data: freezeShared(e.data) } : undefined)),
    ) as Promise<AppendResult>;
  }

  /** See {@link EventStore.readStream}. */
  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const backwards = options.direction === 'backwards';
    const from = options.fromRevision ?? (backwards ? 'end' : 'start');
    const limit = options.maxCount ?? -1;
    if (limit === 0) return [];
    return this.read(() => {
      if (backwards) {
        const rev = from === 'end' ? MAX_REVISION : from === 'start' ? 0n : from;
        return this.stmts.readBackwards.all(stream, rev, options.toRevision ?? 0n, limit);
      }
      if (from === 'end') return [];
      return this.stmts.readForwards.all(stream, from === 'start' ? 0n : from, options.toRevision ?? MAX_REVISION, limit);
    });
  }

  /**
   * See {@link EventStore.readAll}. Events this instance just committed are answered from memory
   * ({@link SqliteRecentEvents}). While the writer thread holds a batch, the read stops at the
   * log's head as it was when the batch was handed over (raised by each append answered since):
   * the thread's commit becomes visible in the file before its answer reaches this thread, and
   * reading a large event of it back from the file would cost this thread's event loop tens of
   * ms (a 1,000,000-ideograph event: 23–50 ms), where the answer, a moment later, puts it in
   * memory and wakes the subscriptions to read it from there. Events other processes commit
   * meanwhile are read once the batch is answered (or has failed). A page shorter than `maxCount`
   * still ends at the end of an append.
   */
  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const after = options.fromPosition ?? 0n;
    const limit = options.maxCount ?? 4096;
    if (limit <= 0) return [];
    const prefix = options.streamPrefix;
    const upTo = this.inFlight > 0 ? this.inFlightReadLimit : MAX_POSITION;
    if (!this.closed) {
      if (after >= upTo) return [];
      const held = prefix ? null : this.recent.readAfter(after, limit);
      if (held) return held;
    }
    return this.read(() => (prefix ? this.stmts.readAllPrefix.all(after, upTo, prefix.length, prefix, limit) : this.stmts.readAll.all(after, upTo, limit)));
  }

  /** See {@link EventStore.eventAt}: one indexed read of `events` (the primary key). */
  async eventAt(position: bigint): Promise<RecordedEvent | null> {
    this.assertOpen();
    const row = this.guard(() => this.stmts.eventAt.get(position));
    return row ? toRecorded(row) : null;
  }

  /** See {@link EventStore.streamRevision}. */
  async streamRevision(stream: string): Promise<bigint | null> {
    this.assertOpen();
    return this.guard(() => this.appender.currentRevision(stream));
  }

  /** See {@link EventStore.streamIncarnation}: read from `events` and `deleted_streams` (indexed). */
  async streamIncarnation(stream: string): Promise<bigint> {
    this.assertOpen();
    return this.guard(() => this.appender.incarnation(stream));
  }

  /**
   * The highest position ever assigned (bigint; monotonic even after deletions), or 0n for an
   * empty store, as this thread's connection reads it: it counts a batch the writer thread
   * committed whose answer has not arrived, which {@link readAll} does not read yet (see
   * {@link readableHead}).
   */
  async headPosition(): Promise<bigint> {
    this.assertOpen();
    return this.guard(() => this.readHead());
  }

  /**
   * See {@link EventStore.readableHead}. While the writer thread holds a batch: the limit
   * {@link readAll} reads up to (the head when the batch was handed over, raised by each append
   * answered since: committed, never lowered), not the head, which may already count the batch.
   * Otherwise the head this thread's connection reads (sqlite_sequence, one statement: every
   * position up to it was assigned by a committed transaction, of this store, another store on the
   * file or another process; AUTOINCREMENT never reuses one), which {@link readAll} reads without a
   * limit; it becomes the least limit of the next batch handed over, so a read stops below it
   * never, even when reading the head then fails. No batch can be handed over or answered while
   * this runs (it does not wait: one synchronous read on this thread).
   */
  async readableHead(): Promise<bigint> {
    this.assertOpen();
    if (this.inFlight > 0) return this.inFlightReadLimit;
    const head = this.guard(() => this.readHead());
    if (head > this.inFlightReadLimit) this.inFlightReadLimit = head;
    return head;
  }

  /**
   * See {@link EventStore.subscribeToAll}. Live events of this process arrive right after their
   * commit; appends by other processes are seen within `pollIntervalMs`, or, when they commit
   * while a batch of this instance is in the writer thread, once that batch is answered (see
   * {@link readAll}).
   */
  subscribeToAll(options: SubscribeOptions = {}): Subscription {
    this.assertOpen();
    return this.subscriptions.open(options);
  }

  /**
   * See {@link EventStore.deleteStream}: the rows are removed (erasure); positions are not reused.
   * Resolves once the deletion is committed and the WAL checkpointed (TRUNCATE): no byte of the
   * stream's events is left in the database file nor the WAL; when another connection's open read
   * refuses the checkpoint, it resolves all the same and the checkpoint is retried until it
   * succeeds ({@link pendingWalScrub} meanwhile; see the class comment).
   */
  deleteStream(stream: string, options: DeleteStreamOptions = {}): Promise<void> {
    try {
      this.assertOpen();
    } catch (error) {
      return Promise.reject(error);
    }
    return this.enqueue({ kind: 'delete', stream, expected: options.expectedRevision }).then(() => undefined);
  }

  /**
   * Checkpoints the WAL into the database file and truncates it to zero bytes, so it holds no
   * older copy of any page. Returns false when another connection's read or write prevented a
   * full checkpoint (it is then retried on a timer until it succeeds, see
   * {@link SqliteEventStoreOptions.walPurgeRetry}). Called after deletions.
   */
  purgeWal(): boolean {
    this.assertOpen();
    return this.guard(() => this.walPurge.purge());
  }

  /**
   * The WAL scrub an erasure still waits for (another connection's open read refused the
   * checkpoint: the erased rows' older pages are still in the WAL file), or null when none.
   */
  pendingWalScrub(): PendingWalScrub | null {
    return this.walPurge.pendingScrub();
  }

  /** Calls `listener` each time a WAL scrub that was refused at first completes (e.g. to log one line). */
  reportWalScrubs(listener: (scrubbed: WalScrubbed) => void): void {
    this.walPurge.onScrubbed(listener);
  }

  /**
   * See {@link EventStore.probeWrite}: {@link probeSqliteWrite} on this thread's connection (a commit that changes
   * nothing, the write lock taken without waiting, and the free space of the file's file system). Errors as a
   * write's ({@link toStoreError}).
   */
  async probeWrite(): Promise<void> {
    this.assertOpen();
    this.guard(() => probeSqliteWrite(this.db, this.busyTimeoutMs));
  }

  /** See {@link EventStore.logCopy}: {@link SqliteLogCopy} on this thread's connection (open the store without the writer thread for a copy). */
  logCopy(): LogCopy {
    this.assertOpen();
    return new SqliteLogCopy(this.db);
  }

  /** Commits pending appends (waits for the writer thread's), ends subscriptions, gives up the claims still held and closes the file. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    while (this.queue.length > 0) this.flush();
    this.closed = true;
    this.claims?.close();
    await this.writerThread?.close();
    this.walPurge.stop();
    this.walPurge.tryPurge();
    await this.subscriptions.closeAll();
    this.db.close();
  }

  private enqueue(write: SqliteWrite, given?: PendingOp['given']): Promise<SqliteWriteResult> {
    return new Promise((resolve, reject) => {
      this.queue.push({ write, resolve, reject, ...(given ? { given } : {}) });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => {
          this.flushScheduled = false;
          this.drain();
        });
      }
    });
  }

  /**
   * Flushes the queue. With the writer thread, only while no batch is in flight: what is queued
   * meanwhile waits for the answer and goes as one larger batch (the thread would commit it after
   * the one in flight anyway), so one message and one transaction carry more appends.
   */
  private drain(): void {
    if (this.useWriterThread && this.inFlight > 0) return;
    while (this.queue.length > 0 && !this.closed) this.flush();
  }

  /**
   * Runs up to maxBatchSize queued operations in one `BEGIN IMMEDIATE … COMMIT` ({@link SqliteGroupCommit}),
   * here or in the writer thread: a failing operation is rolled back alone and gets its own error;
   * the others commit. Results are delivered only after COMMIT returned. If the transaction itself
   * fails (lock timeout, I/O error), every operation of the batch gets an EventStoreUnavailableError
   * and nothing is written.
   */
  private flush(): void {
    const batch = this.queue.splice(0, this.groupCommit ? this.maxBatchSize : 1);
    // Nothing more is written into a damaged file (queued before the damage was found), nor into one no longer at its path.
    if (!this.corruption) this.assertSameFile();
    if (this.corruption) return batch.forEach((op) => op.reject(this.corruption));
    if (this.useWriterThread) {
      if (!this.writerThread || this.writerThread.failed) {
        // A thread that failed (its batches got EventStoreUnavailableError) is replaced for the next writes.
        this.writerThread = new SqliteWriterThread(this.db.name, this.busyTimeoutMs, this.groupCommit ? this.maxBatchSize : 1, this.writerThread?.stats);
      }
      if (this.inFlight === 0) this.inFlightReadLimit = this.knownHead();
      this.inFlight += 1;
      const answered = (): void => {
        this.inFlight -= 1;
        // A batch committed while the -wal was being deleted is in the unlinked WAL too.
        if (this.inFlight === 0 && this.replaced?.mainFile === false) this.checkpointUnlinkedWal();
        if (this.inFlight === 0) this.drain();
      };
      this.writerThread.submit(batch.map((op) => op.write)).then(
        (outcomes) => {
          this.deliver(batch, outcomes);
          answered();
        },
        (error) => {
          const failure = this.storeError(error);
          batch.forEach((op) => op.reject(failure));
          answered();
        },
      );
      return;
    }
    let outcomes: OperationOutcome[];
    try {
      outcomes = commitSqliteWrites(
        this.group,
        this.appender,
        this.walPurge,
        batch.map((op) => op.write),
      );
    } catch (error) {
      const unavailable = this.storeError(error);
      for (const op of batch) op.reject(unavailable);
      return;
    }
    this.deliver(batch, outcomes);
  }

  /**
   * Settles each operation of a committed batch with its outcome (keeping what it wrote in
   * {@link SqliteRecentEvents}), and wakes the subscriptions when something was written.
   */
  private deliver(batch: PendingOp[], outcomes: OperationOutcome[]): void {
    batch.forEach((op, i) => {
      const outcome = outcomes[i];
      if (!outcome.ok) return op.reject(outcome.error);
      if (op.write.kind === 'delete') {
        this.recent.clear();
        // The writer thread's checkpoint after the deletion may have been refused: this connection
        // checks (a no-op on an empty WAL) and retries on the timer until it succeeds.
        if (this.useWriterThread && (outcome.value as number) > 0 && !this.closed) this.walPurge.purgeWithoutWaiting();
        return op.resolve(outcome.value as SqliteWriteResult);
      }
      const { writtenAtMs, ...result } = outcome.value as SqliteAppendResult;
      this.recent.appended(op.write.stream, op.write.events, { ...result, writtenAtMs }, op.given);
      if (result.position > this.inFlightReadLimit) this.inFlightReadLimit = result.position;
      op.resolve(result);
    });
    if (outcomes.some((o) => o.ok)) this.subscriptions.wake();
  }

  /**
   * The log's head as this thread's connection sees it now (the end of the last committed append),
   * or, when it cannot be read, the limit held so far (lower, still the end of an append).
   */
  private knownHead(): bigint {
    try {
      const head = this.readHead();
      return head > this.inFlightReadLimit ? head : this.inFlightReadLimit;
    } catch {
      return this.inFlightReadLimit;
    }
  }

  /** The highest position ever assigned, as this thread's connection reads it now (sqlite_sequence), 0n when none. */
  private readHead(): bigint {
    return this.stmts.head.get()?.seq ?? 0n;
  }

  private read(query: () => Row[]): Promise<RecordedEvent[]> {
    try {
      this.assertOpen();
      return Promise.resolve(this.guard(query).map(toRecorded));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private guard<T>(fn: () => T): T {
    try {
      return fn();
    } catch (error) {
      throw this.storeError(error);
    }
  }

  /**
   * The store's error for `error` ({@link toStoreError}); a damaged file's puts the store in its
   * corrupt state (every operation refused), telling the listeners once.
   */
  private storeError(error: unknown): unknown {
    const failure = toStoreError(error, this.db.name);
    if (failure instanceof EventStoreCorruptError && this.corruption === null) {
      this.corruption = failure;
      for (const listener of this.corruptionListeners) listener(failure);
    }
    return failure;
  }

  /**
   * Puts the store in its corrupt state ({@link storeError}'s, telling the listeners once) with an
   * {@link EventStoreReplacedError} when the file's path no longer names the file it opened
   * ({@link SqliteFileIdentity}): every operation is then refused, so nothing is acknowledged into
   * an unlinked file and no writer thread opens the new one beside this connection (ncdata69 F2).
   */
  private assertSameFile(): void {
    const change = this.identity?.change();
    if (change === undefined) return;
    this.replaced = change;
    if (change.mainFile) {
      // The old file's -wal and -shm, left at their paths, would be applied to the file now there at the next open.
      const aside = this.identity?.setAsideSidecars() ?? [];
      this.storeError(new EventStoreReplacedError(this.db.name, change.message, aside));
    } else {
      // Only the -wal or -shm went: the file is still ours, and what was acknowledged is in the unlinked WAL this
      // connection holds, until it closes. Copied into the file now, it outlives a crash (ncrecheck70 F3).
      this.checkpointUnlinkedWal();
      this.storeError(new EventStoreReplacedError(this.db.name, change.message));
    }
  }

  /**
   * After the store's `-wal` or `-shm` file was deleted or replaced ({@link replaced}, the file itself
   * unchanged): copies the WAL this connection still holds into the file (`wal_checkpoint(TRUNCATE)`),
   * so the appends acknowledged before are in the file any later process opens, also after a `kill
   * -9`. Run when the change is found, and again once the writer thread's batches in flight then are
   * answered. A checkpoint that fails (another process holds the file) leaves it to this
   * connection's close, as before.
   */
  private checkpointUnlinkedWal(): void {
    try {
      this.db.pragma('wal_checkpoint(TRUNCATE)');
    } catch {
      // Left to the close.
    }
  }

  /** Throws unless the store is open, sound and its file still at its path ({@link assertSameFile}: one `stat(2)` per operation). */
  private assertOpen(): void {
    if (this.closed) throw new EventStoreUnavailableError('the SQLite event store is closed');
    if (!this.corruption) this.assertSameFile();
    if (this.corruption) throw this.corruption;
  }

  private prepareStatements() {
    const cols = 'position, stream, revision, id, type, data, metadata, created';
    const db = this.db;
    return {
      readForwards: db
        .prepare<[string, bigint, bigint, number], Row>(
          `SELECT ${cols} FROM events WHERE stream = ? AND revision >= ? AND revision <= ? ORDER BY revision ASC LIMIT ?`,
        )
        .safeIntegers(true),
      readBackwards: db
        .prepare<[string, bigint, bigint, number], Row>(
          `SELECT ${cols} FROM events WHERE stream = ? AND revision <= ? AND revision >= ? ORDER BY revision DESC LIMIT ?`,
        )
        .safeIntegers(true),
      readAll: db
        .prepare<[bigint, bigint, number], Row>(`SELECT ${cols} FROM events WHERE position > ? AND position <= ? ORDER BY position ASC LIMIT ?`)
        .safeIntegers(true),
      readAllPrefix: db
        .prepare<[bigint, bigint, number, string, number], Row>(
          `SELECT ${cols} FROM events WHERE position > ? AND position <= ? AND substr(stream, 1, ?) = ? ORDER BY position ASC LIMIT ?`,
        )
        .safeIntegers(true),
      eventAt: db.prepare<[bigint], Row>(`SELECT ${cols} FROM events WHERE position = ?`).safeIntegers(true),
      head: db.prepare<[], { seq: bigint }>("SELECT seq FROM sqlite_sequence WHERE name = 'events'").safeIntegers(true),
    };
  }
}

function toRecorded(row: Row): RecordedEvent {
  return recordedFromRow(row, new Date(Number(row.created)));
}

function busyTimeoutOf(options: SqliteEventStoreOptions): number {
  return options.busyTimeoutMs ?? 5000;
}

/**
 * The error of opening the store at `filePath` for `error`: a damaged file's
 * ({@link EventStoreCorruptError}), a full disk's (saying to free space), or EventStoreUnavailableError with SQLite's reason.
 */
function openError(filePath: string, error: unknown): Error {
  if (error instanceof EventStoreCorruptError || error instanceof EventStoreCopyInProgressError || error instanceof EventStoreSchemaNewerError) return error;
  if (isSqliteCorrupt(error)) return new EventStoreCorruptError(filePath, (error as Error).message, error);
  const reason = (error as Error).message;
  if (isSqliteDiskFull(error))
    return new EventStoreUnavailableError(
      `cannot open SQLite event store at ${filePath}: the disk is full (${reason}): free space on its file system, then start again (nothing acknowledged is lost: SQLite finishes or rolls back the interrupted transaction at the next open)`,
      error,
    );
  return new EventStoreUnavailableError(`cannot open SQLite event store at ${filePath}: ${reason}`, error);
}
