import Database from 'better-sqlite3';
import { SqliteWalPurge, type PendingWalScrub, type WalPurgeRetry, type WalScrubbed } from '@lib/event-store';
import { READ_MODEL_DDL, READ_MODEL_SCHEMA_VERSION, READ_MODEL_TABLES, RETIRED_READ_MODEL_TABLES } from './read-model-schema';
import { missingReadModelSchema } from './read-model-schema-gaps';
import { recallIndexTablesIn } from './recall-index-tables';
import { occursAsWholeClusters } from './recall-searchable';

/**
 * SQL function `recall_whole_clusters(text, term)` of every read-model connection: 1 when `term`
 * occurs in `text` as whole grapheme clusters (`occursAsWholeClusters`), else 0. Recall checks
 * query words holding regional indicators with it.
 */
export const RECALL_WHOLE_CLUSTERS_FUNCTION = 'recall_whole_clusters';

/** File name of the read models inside `DATA_DIR` (see {@link ReadModelStore.open}). */
export const READ_MODEL_FILE_NAME = 'read-models.sqlite';

/**
 * WAL frames (pages of 4 KiB) after which a commit of the read models checkpoints the WAL into the
 * database file (SQLite's default is 1000). A projector batch of about 9 events from 9 sessions
 * dirties about 66 pages (each session-keyed B-tree gets one leaf per session, plus FTS5's new
 * segment), so the default checkpointed every ~15 commits, each time copying the hot pages again
 * and syncing both files. Measured with `bench/projector-cost.ts` (issue 14; 20,000 events, 9 per
 * transaction): 91.8 → 77.0 µs of CPU and 173 → 110 µs of wall time per event, batch p99 13.1 →
 * 4.9 ms, the longest batch unchanged (~46–50 ms). 0 (never) was worse (readers and writers search
 * a growing WAL index). The WAL file grows to about 40 MiB and is reused, not shrunk (an erasure
 * truncates it, see {@link ReadModelStore.purgeWal}).
 */
export const READ_MODEL_WAL_AUTOCHECKPOINT_PAGES = 10_000;

/** A rebuild of the read models from the log under way (or interrupted): see {@link ReadModelStore.rebuildUnderWay}. */
export interface ReadModelRebuild {
  /** Why it started, as the start-up line says it (e.g. `npm run rebuild-read-models`). */
  reason: string;
  /** ISO-8601 UTC time it started. */
  startedAt: string;
}

/**
 * The `projector_checkpoints` row of the interrupted-erasure sweep (write-side/interrupted-erasures): the read models'
 * checkpoint when the replica's last sweep that looked at every session active since the one before began, so that a
 * restarted replica looks from there (newcomer ncsweep72 F2). Not derived from the log: a rebuild drops it.
 */
export const ERASURE_SWEEP_CHECKPOINT = 'erasure-sweep';

/** The checkpoint of a projector and what identifies its event (see {@link ReadModelStore.readCheckpointEvent}). */
export interface CheckpointEvent {
  /** The last global position applied (bigint), 0n when none. */
  position: bigint;
  /** `checkpointEventIdentity` of the event at `position` when it was applied; null at 0n, or when written by a release before it was recorded. */
  event: string | null;
}

/** Most idle read-only connections {@link ReadModelStore.pagedSnapshot} keeps open for later reads (more are opened while more reads overlap). */
export const MAX_IDLE_SNAPSHOT_READERS = 2;

/** Most statements {@link ReadModelStore.statement} keeps prepared. */
export const MAX_CACHED_STATEMENTS = 256;

/** How long (ms) a connection to the read models waits for another connection's lock (SQLite's busy timeout), unless a transaction says otherwise. */
export const READ_MODELS_BUSY_TIMEOUT_MS = 5000;

/**
 * The SQLite database holding every read model (schema in `./read-model-schema`). One
 * connection, synchronous (better-sqlite3); WAL journal for files, checkpointed every
 * {@link READ_MODEL_WAL_AUTOCHECKPOINT_PAGES} pages. Reads done in pages across turns of the event
 * loop use read-only connections of their own, each holding one snapshot ({@link pagedSnapshot}).
 *
 * Projections write through {@link transaction}; queries read `db` directly. When the file
 * holds another schema version, every table is dropped and recreated empty (checkpoint 0n), so
 * the projector replays the log from the start.
 *
 * Erasure on disk: `secure_delete` is on (deleted rows and freed pages are overwritten with
 * zeros), the FTS5 recall indexes run with their `secure-delete` option (a deleted document's
 * entries leave the index segments at once, instead of delete markers next to the old entries
 * until a merge), and {@link purgeWal} truncates the WAL after an erasure; when another
 * connection's open read refuses that (e.g. a `sqlite3 .backup` of the running service), it is
 * retried on an unref'd timer until it succeeds ({@link SqliteWalPurge}), {@link pendingWalScrub}
 * telling it meanwhile.
 */
export class ReadModelStore {
  /** Prepared statements by SQL text (see {@link statement}). */
  private readonly statements = new Map<string, Database.Statement>();

  /**
   * The schema version the file held when {@link open} found read models of another version there
   * (and dropped them: the projector rebuilds them from the log); null when it held this version,
   * or nothing (a new file).
   */
  replacedVersion: number | null = null;

  /**
   * What {@link open} found missing from read models of this version (`table erasures`, `column
   * sessions.event_count`: another program changed the file; see `missingReadModelSchema`), which
   * made it drop them for a rebuild from the log; null when nothing was.
   */
  missingSchema: readonly string[] | null = null;

  /** The WAL truncation after erasures, retried until it succeeds. */
  private readonly walPurge: SqliteWalPurge;

  private constructor(
    /** The connection. Queries may prepare statements on it; only projections write. */
    readonly db: Database.Database,
    /** The file path, or `':memory:'`. */
    readonly file: string,
    walPurgeRetry: WalPurgeRetry,
  ) {
    this.walPurge = new SqliteWalPurge(db, walPurgeRetry);
  }

  /**
   * Opens (creating if needed) the read-model database at `file` (e.g.
   * `path.join(DATA_DIR, READ_MODEL_FILE_NAME)`), or an in-memory one for `':memory:'`.
   * The directory must exist. Read models of another schema version are dropped (see
   * {@link replacedVersion}), and so are read models of this version lacking a table or column
   * ({@link missingSchema}): both are rebuilt from the log. Throws better-sqlite3's `SqliteError` when the file cannot be opened.
   * `options.walPurgeRetry`: how a refused WAL truncation after an erasure is retried (default
   * `WAL_PURGE_RETRY_DEFAULTS`: 100 ms doubling up to 2 s).
   */
  static open(file: string, options: { walPurgeRetry?: WalPurgeRetry } = {}): ReadModelStore {
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma(`busy_timeout = ${READ_MODELS_BUSY_TIMEOUT_MS}`);
    db.pragma('secure_delete = ON');
    db.pragma(`wal_autocheckpoint = ${READ_MODEL_WAL_AUTOCHECKPOINT_PAGES}`);
    db.function(RECALL_WHOLE_CLUSTERS_FUNCTION, { deterministic: true }, (text: unknown, term: unknown) =>
      typeof text === 'string' && typeof term === 'string' && occursAsWholeClusters(text, term) ? 1 : 0,
    );
    const store = new ReadModelStore(db, file, options.walPurgeRetry ?? {});
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version !== READ_MODEL_SCHEMA_VERSION) {
      const held = (db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table'").get() as { n: number }).n > 0;
      if (held || version !== 0) store.replacedVersion = version;
      store.reset(
        store.replacedVersion === null ? undefined : `${file} held version ${version}, this release's read models are version ${READ_MODEL_SCHEMA_VERSION}`,
      );
    } else if ((store.missingSchema = nonEmpty(missingReadModelSchema(db))) !== null) {
      store.reset(`${file} held this release's read models (version ${version}) without ${store.missingSchema.join(', ')}`);
    } else {
      db.exec(READ_MODEL_DDL);
      // Files of this version written before the checkpoint's event was recorded: the column comes empty (filled at the next checkpoint).
      const hasEvent = db.prepare("SELECT 1 FROM pragma_table_info('projector_checkpoints') WHERE name = 'event'").get() !== undefined;
      if (!hasEvent) db.exec('ALTER TABLE projector_checkpoints ADD COLUMN event TEXT');
    }
    return store;
  }

  /**
   * The prepared statement of `sql`, prepared once and reused (preparing an FTS5 query costs
   * about 0.1 ms, as much as running a selective one). Statements read integers as bigint
   * (`safeIntegers`). At most {@link MAX_CACHED_STATEMENTS} are kept (the cache is emptied past it:
   * queries build their SQL from a bounded set of filters). Throws SQLite's error for bad SQL.
   */
  statement(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      if (this.statements.size >= MAX_CACHED_STATEMENTS) this.statements.clear();
      statement = this.db.prepare(sql).safeIntegers(true);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  /**
   * Runs `fn` in one SQLite transaction (immediate); a throw rolls everything back and rethrows.
   * `lockWaitMs`: how long (ms) its start waits for another connection's write lock on the file
   * (the busy timeout, for this transaction only); default the connection's ({@link READ_MODELS_BUSY_TIMEOUT_MS}).
   * better-sqlite3 waits on the calling thread, so on the event loop pass a short one.
   * @throws SqliteError `SQLITE_BUSY` when the lock is still held after the wait (nothing written).
   */
  transaction<T>(fn: () => T, lockWaitMs?: number): T {
    this.writes ??= this.db.transaction((run: () => unknown) => run());
    if (lockWaitMs === undefined || lockWaitMs === READ_MODELS_BUSY_TIMEOUT_MS) return this.writes.immediate(fn) as T;
    this.db.pragma(`busy_timeout = ${Math.max(0, Math.floor(lockWaitMs))}`);
    try {
      return this.writes.immediate(fn) as T;
    } finally {
      this.db.pragma(`busy_timeout = ${READ_MODELS_BUSY_TIMEOUT_MS}`);
    }
  }

  /** The transaction function of {@link transaction}, made once (better-sqlite3 builds five wrappers per `db.transaction`). */
  private writes?: Database.Transaction<(run: () => unknown) => unknown>;

  /**
   * Runs `fn` (reads) in one deferred SQLite transaction: all its statements see the same
   * committed state, whatever another connection (the projector's worker thread) commits
   * meanwhile. A throw ends the transaction and rethrows.
   */
  snapshot<T>(fn: () => T): T {
    this.reads ??= this.db.transaction((run: () => unknown) => run());
    return this.reads.deferred(fn) as T;
  }

  /** The transaction function of {@link snapshot}, made once. */
  private reads?: Database.Transaction<(run: () => unknown) => unknown>;

  /** Read-only connections of {@link pagedSnapshot} not in use (at most {@link MAX_IDLE_SNAPSHOT_READERS}). */
  private readonly idleReaders: Database.Database[] = [];
  /** Read-only connections of {@link pagedSnapshot} in use: closed when their read ends once {@link close} was called. */
  private readonly busyReaders = new Set<Database.Database>();

  /**
   * Runs `read` against one consistent snapshot of the read models that stays the same across
   * turns of the event loop, so a read of many rows can be done in pages with other requests
   * served between them (see `readWindowRows`).
   *
   * With a file: `read` gets a read-only connection of its own (an idle one, or one opened for it;
   * up to {@link MAX_IDLE_SNAPSHOT_READERS} are kept for later reads), `paged: true`, inside a
   * deferred transaction (`BEGIN` … `COMMIT`): its first statement fixes the snapshot (WAL), and
   * nothing committed afterwards by the projector (on {@link db} or in its worker thread) is seen
   * by any of its statements until `read` settles. Meanwhile that open read keeps a WAL checkpoint
   * from going past the snapshot (an erasure's WAL truncation is then retried, see {@link purgeWal}).
   * In memory (`:memory:`, tests), no other connection can see the database: `read` gets
   * {@link db} and `paged: false`, and must then do all its statements without awaiting in between
   * (synchronously), which is one snapshot too.
   * Rejects with what `read` throws, or SQLite's error when the connection cannot be opened.
   */
  async pagedSnapshot<T>(read: (db: Database.Database, paged: boolean) => Promise<T>): Promise<T> {
    if (this.file === ':memory:') return read(this.db, false);
    if (!this.db.open) throw new TypeError('The database connection is not open');
    const reader = this.idleReaders.pop() ?? ReadModelStore.openReader(this.file);
    this.busyReaders.add(reader);
    let result: T;
    try {
      reader.exec('BEGIN');
      try {
        result = await read(reader, true);
      } finally {
        if (reader.inTransaction) reader.exec('COMMIT');
      }
    } catch (err) {
      this.releaseReader(reader, false);
      throw err;
    }
    this.releaseReader(reader, true);
    return result;
  }

  /** A read-only connection to `file` for {@link pagedSnapshot} (WAL is the file's mode already). */
  private static openReader(file: string): Database.Database {
    const reader = new Database(file, { readonly: true, fileMustExist: true });
    reader.pragma(`busy_timeout = ${READ_MODELS_BUSY_TIMEOUT_MS}`);
    return reader;
  }

  /** Gives a reader back to the idle ones, or closes it (store closed, too many idle, or `reusable` false after an error). */
  private releaseReader(reader: Database.Database, reusable: boolean): void {
    this.busyReaders.delete(reader);
    if (reusable && this.db.open && this.idleReaders.length < MAX_IDLE_SNAPSHOT_READERS) this.idleReaders.push(reader);
    else if (reader.open) reader.close();
  }

  /**
   * Drops every read-model table (the tenants' recall indexes, and tables of earlier versions, included) and recreates them empty (checkpoints back to 0n), in one transaction.
   * With `rebuildReason` (e.g. `npm run rebuild-read-models`), the same transaction records that a
   * rebuild from the log starts ({@link rebuildUnderWay}; end it with {@link endRebuild}), so a
   * rebuild interrupted at any point is known at the next start.
   */
  reset(rebuildReason?: string): void {
    this.statements.clear();
    this.transaction(() => {
      for (const table of [...recallIndexTablesIn(this.db), ...READ_MODEL_TABLES, ...RETIRED_READ_MODEL_TABLES]) this.db.exec(`DROP TABLE IF EXISTS ${table}`);
      this.db.exec(READ_MODEL_DDL);
      this.db.pragma(`user_version = ${READ_MODEL_SCHEMA_VERSION}`);
      if (rebuildReason !== undefined)
        this.db.prepare('INSERT INTO read_model_rebuild (only, reason, started_at) VALUES (1, ?, ?)').run(rebuildReason, new Date().toISOString());
    });
  }

  /** The rebuild from the log under way, or left unfinished by a process that stopped during it; null when none. */
  rebuildUnderWay(): ReadModelRebuild | null {
    const row = this.db.prepare('SELECT reason, started_at AS startedAt FROM read_model_rebuild').get() as ReadModelRebuild | undefined;
    return row ?? null;
  }

  /** Records that the rebuild from the log is done (it reached the log's head). Idempotent. */
  endRebuild(): void {
    this.db.prepare('DELETE FROM read_model_rebuild').run();
  }

  /** The last global position applied by `projector` (exclusive checkpoint, bigint), 0n when none. */
  readCheckpoint(projector: string): bigint {
    return this.readCheckpointEvent(projector).position;
  }

  /** `projector`'s checkpoint and what identifies the event at it (see {@link CheckpointEvent}). */
  readCheckpointEvent(projector: string): CheckpointEvent {
    const row = this.db.prepare('SELECT position, event FROM projector_checkpoints WHERE projector = ?').safeIntegers(true).get(projector) as
      CheckpointEvent | undefined;
    return row ?? { position: 0n, event: null };
  }

  /**
   * Stores `position` as `projector`'s checkpoint, with `event`, what identifies the event at that
   * position (`checkpointEventIdentity`; null when not known). Call inside the transaction that applied the events.
   */
  writeCheckpoint(projector: string, position: bigint, event: string | null = null): void {
    this.statement(
      'INSERT INTO projector_checkpoints (projector, position, event) VALUES (?, ?, ?) ON CONFLICT (projector) DO UPDATE SET position = excluded.position, event = excluded.event',
    ).run(projector, position, event);
  }

  /**
   * {@link writeCheckpoint} outside a transaction, without waiting for another connection's write
   * (busy timeout 0 for this one statement; the connection's own is restored): returns false, nothing
   * written, when another connection holds the file's write lock, e.g. the projector's worker thread
   * applying a long session's erasure. For a checkpoint that may lag (a later call moves it on): the
   * event loop is never held for the busy timeout (5 s), as a write waiting for the lock holds it.
   * @throws what the write throws but `SQLITE_BUSY`.
   */
  tryWriteCheckpoint(projector: string, position: bigint, event: string | null = null): boolean {
    const busyTimeout = this.db.pragma('busy_timeout', { simple: true }) as number;
    this.db.pragma('busy_timeout = 0');
    try {
      this.writeCheckpoint(projector, position, event);
      return true;
    } catch (error) {
      if ((error as { code?: unknown }).code === 'SQLITE_BUSY') return false;
      throw error;
    } finally {
      this.db.pragma(`busy_timeout = ${busyTimeout}`);
    }
  }

  /** Records `event` as what identifies the event at `projector`'s checkpoint when none is recorded and the checkpoint is still `position` (read models of an older release). */
  recordCheckpointEvent(projector: string, position: bigint, event: string): void {
    this.db.prepare('UPDATE projector_checkpoints SET event = ? WHERE projector = ? AND position = ? AND event IS NULL').run(event, projector, position);
  }

  /**
   * Checkpoints the WAL into the database file and truncates it to zero bytes, so no older copy
   * of a page (e.g. of erased rows) stays in it. Returns false when another connection prevented
   * a full checkpoint: it is then retried on a timer until it succeeds (see {@link pendingWalScrub}).
   * Never waits for the other connection (this connection serves reads on the event loop) and never throws.
   */
  purgeWal(): boolean {
    this.walPurge.purgeWithoutWaiting();
    return !this.walPurge.pending;
  }

  /** The WAL scrub an erasure still waits for (another connection's read refused the checkpoint), or null when none. */
  pendingWalScrub(): PendingWalScrub | null {
    return this.walPurge.pendingScrub();
  }

  /** Calls `listener` each time a WAL scrub that was refused at first completes (e.g. to log one line). */
  reportWalScrubs(listener: (scrubbed: WalScrubbed) => void): void {
    this.walPurge.onScrubbed(listener);
  }

  /** Closes the connection (a pending WAL scrub is tried once more; SQLite removes the WAL when the last connection closes). Idempotent. */
  close(): void {
    this.walPurge.stop();
    for (const reader of this.idleReaders.splice(0)) reader.close();
    if (!this.db.open) return;
    this.walPurge.tryPurge();
    this.db.close();
  }
}

/** `list`, or null when it is empty. */
function nonEmpty<T>(list: readonly T[]): readonly T[] | null {
  return list.length > 0 ? list : null;
}
