import * as path from 'node:path';
import { Logger } from '@nestjs/common';
import { Piscina } from 'piscina';
import {
  EventStoreUnavailableError,
  LONG_TASK_MS,
  MAX_APPEND_COMPLETION_PAGES,
  EventStoreCorruptError,
  isSqliteDiskFull,
  isSqliteWriteFailure,
  headToSkipTo,
  knownStringUnits,
  mayContinueAppend,
  yieldToIo,
  type EventStore,
  type RecordedEvent,
  type Subscription,
} from '@lib/event-store';
import type { ApplyBatchOutcome, ApplyBatchTask } from './projection-worker-tasks';
import { PositionWaiters } from './position-waiters';
import type { CheckpointEvent, ReadModelStore } from './read-model-store';
import { READ_MODEL_SCHEMA_VERSION } from './read-model-schema';
import { SessionReadModelWriter } from './session-read-model-writer';
import { checkpointEventIdentity, offLogRemedy, readModelsOffLog } from './checkpoint-event';
import { ReadModelsDamagedError, isReadModelsDamage } from './read-models-damage-rule';
import { asReadModelsReplaced } from './read-models-replaced';
import { loggedBytesOfSession } from './queries/session-row';
import { ALL_ROWS, ERASURE_STREAM_PREFIX, SESSION_ERASED, erasedRowsOf, type ErasedRows, type SessionErasedData } from '../events/erasure-events';

/** Name of this projector's row in `projector_checkpoints`. */
export const SESSION_PROJECTOR_NAME = 'session-read-models';

/** Health view of the projector. */
export interface SessionProjectorState {
  /** Global position of the last event applied (bigint; exclusive checkpoint for the next read). 0n = nothing yet. */
  checkpoint: bigint;
  /** True between {@link SessionProjector.start} and {@link SessionProjector.stop}. */
  running: boolean;
  /** Message of the last failure (subscription or projection) not yet followed by a successful batch, nor by a read of the log's head the checkpoint had reached (the store answers again, nothing to apply); null when healthy. */
  lastError: string | null;
  /** ISO-8601 time of `lastError`, or null. */
  lastErrorAt: string | null;
  /**
   * True while the projector refuses to follow the store because its read models were projected
   * from another log ({@link ReadModelsOfAnotherLogError}: a store restored under a running
   * replica): no read can be served until the read models are rebuilt.
   */
  offLog: boolean;
  /**
   * True while `lastError` is the read models file found damaged ({@link isReadModelsDamage}: SQLite's
   * `SQLITE_CORRUPT…` or `SQLITE_NOTADB`, not the event store's): the projector cannot apply the log
   * to it until a restart rebuilds it. Also when the batch failed in the worker thread (its verdict
   * comes with the batch's outcome). Listeners of {@link SessionProjector.onReadModelsDamage} are told at once.
   */
  readModelsDamaged: boolean;
  /**
   * While `lastError` says the read models cannot be written ({@link isReadModelsUnwritable}: their disk full, or their
   * file's reads or writes failing, e.g. past a file-size limit or a quota): why, saying where and the remedy (free space
   * on the file system of `read-models.sqlite`, or fix what fails its writes); null otherwise. The projector retries (at most every `maxRetryDelayMs`)
   * and this turns null at its first batch that commits.
   */
  readModelsFull: string | null;
}

/**
 * How long (ms) a batch the projector applies on the event loop waits for another connection's
 * write lock on the read models (see {@link SessionProjectorOptions.lockWaitMs}): long enough for
 * a checkpoint of this process's other connections, short enough not to hold other requests.
 */
export const EVENT_LOOP_LOCK_WAIT_MS = 50;

/** Whether `error` is SQLite's `SQLITE_BUSY` (any extended code): another connection held the lock past the wait. */
export function isReadModelsLocked(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/**
 * True when `error`, met by the projector, says the read models cannot be written: for want of space
 * ({@link isSqliteDiskFull}: `SQLITE_FULL`, `ENOSPC`), or because their file's I/O fails
 * ({@link isSqliteWriteFailure}: `disk I/O error` past a file-size limit or a quota, a failing disk: newcomer ncops67 F1,
 * where the log ran 33 appends ahead and `/health` said ok), also as the message of a batch that failed in the worker
 * thread; not a failure of the event store itself ({@link EventStoreUnavailableError}, which the projector only reads).
 */
export function isReadModelsUnwritable(error: unknown): boolean {
  return !(error instanceof EventStoreUnavailableError) && isSqliteWriteFailure(error);
}

/**
 * Whether `why` (the projector's {@link SessionProjector.readModelsFull}, holding its error's text) says their disk is full,
 * rather than that their file's I/O fails: a full disk unless it names such a failure that is not one. The one rule the
 * 503 messages of refused writes and reads follow (newcomer ncrecheck67 F1: a read blamed a full disk for a file-size limit).
 */
export function unwritableForFullDisk(why: string): boolean {
  return isSqliteDiskFull(why) || !isSqliteWriteFailure(why);
}

/**
 * Why the read models in `file` cannot be written, `why` (the failure's text, `Name: message`) being such a failure
 * ({@link isReadModelsUnwritable}), and what ends it, told apart by {@link unwritableForFullDisk}: their disk full (free
 * space), or their file's I/O failing (fix the limit, quota or disk).
 */
function unwritableReadModels(file: string, why: string): { because: string; until: string } {
  return unwritableForFullDisk(why)
    ? { because: `the disk holding ${file} is full`, until: 'space is freed on its file system' }
    : { because: `reading or writing ${file} fails`, until: 'what fails its I/O is fixed (a file-size limit such as ulimit -f, a disk quota, a failing disk)' };
}

/** Tuning of {@link SessionProjector}. */
export interface SessionProjectorOptions {
  /**
   * Events per live transaction (default 500); a batch that reaches it goes on to the end of the
   * append its last event belongs to (see `consume`), so it may hold more.
   */
  maxBatchSize?: number;
  /**
   * Shortest time between the starts of two live batches, in ms (default {@link DEFAULT_COMMIT_INTERVAL_MS}).
   * An event that arrives sooner after the previous commit waits, with whatever else arrives
   * meanwhile, so under load one read-model transaction (and one flush of the recall index)
   * covers many appends; when the log is idle the first event is applied at once. A
   * {@link SessionProjector.waitForPosition} for a position not yet reached ends the wait.
   * 0 applies what is available right away (one transaction per group of appends).
   */
  commitIntervalMs?: number;
  /**
   * Apply live batches in a worker thread with its own connection to the read-model file (default
   * false; ignored for `':memory:'`): the event loop only reads the log and hands the batches over,
   * and keeps serving reads on its own connection (WAL). {@link SessionProjector.applyBatch},
   * {@link SessionProjector.rebuild} and {@link SessionProjector.eraseSession} still run on the
   * calling thread. The thread starts with {@link SessionProjector.start} and ends with `stop`.
   */
  worker?: boolean;
  /**
   * How long (ms) a batch applied on this thread ({@link SessionProjector.applyBatch}: live batches
   * without `worker`, a rebuild's pages) waits for another connection's write lock on the read-model
   * file before it fails with `SQLITE_BUSY` (default {@link EVENT_LOOP_LOCK_WAIT_MS}; null: the
   * connection's busy timeout, 5 s). better-sqlite3 waits on the calling thread: with 5 s, another
   * process holding the file's write lock (a `sqlite3` shell with an open transaction) held the
   * service's event loop 5 s per try. A failed batch is retried as after any failure (`retryDelayMs`
   * doubling up to `maxRetryDelayMs`); reads needing its position wait meanwhile.
   */
  lockWaitMs?: number | null;
  /** Page size of {@link SessionProjector.rebuild}'s reads of the log (default 1000). */
  rebuildPageSize?: number;
  /** First delay before resubscribing after a failure, in ms (default 100); doubles up to `maxRetryDelayMs`. */
  retryDelayMs?: number;
  /** Longest delay between retries, in ms (default 5000). */
  maxRetryDelayMs?: number;
  /**
   * While the read models are rebuilt from the log after a schema change ({@link ReadModelStore.replacedVersion}),
   * the least time between two progress lines in the log, in ms (default {@link REBUILD_PROGRESS_INTERVAL_MS}).
   */
  rebuildProgressMs?: number;
  /**
   * When the projector (re)subscribes this many positions or more behind the log's head (default
   * {@link CATCH_UP_LINE_POSITIONS}), e.g. on read models deleted after a restore or after a long
   * stop, it logs one line saying it catches up, progress lines as a rebuild does
   * (`rebuildProgressMs`), and one when it has caught up.
   */
  catchUpLinePositions?: number;
  /**
   * How long (ms) the projector has had no event to apply before it checks whether the log ends
   * with deleted events past its checkpoint (see {@link SessionProjector}; default
   * {@link TAIL_CHECK_IDLE_MS}), and between two such checks while something waits for it.
   */
  tailCheckIdleMs?: number;
}

/**
 * Why the projector stops following a store (see {@link SessionProjector.start}): its read models were
 * projected from another log (the store was restored from a backup and written again, or is another
 * database). The message says how they differ and what to do.
 */
export class ReadModelsOfAnotherLogError extends Error {
  override readonly name = 'ReadModelsOfAnotherLogError';
}

/** The reason {@link SessionProjector.rebuild} records for its rebuild (the start-up line of an interrupted one names it). */
export const REBUILD_COMMAND_REASON = 'npm run rebuild-read-models';

/** Default {@link SessionProjectorOptions.catchUpLinePositions}: a catch-up of 10,000 positions or more is logged (a few seconds or more on 2 cores). */
export const CATCH_UP_LINE_POSITIONS = 10_000n;

/** Default {@link SessionProjectorOptions.rebuildProgressMs}: one progress line every 10 s of a rebuild. */
export const REBUILD_PROGRESS_INTERVAL_MS = 10_000;

/**
 * Default {@link SessionProjectorOptions.commitIntervalMs}: 0. Measured under bench figure 1's load
 * (issue 14): a live batch already holds one group commit of the store (about 11 appends); 8 ms
 * doubled it (18.5 appends per batch) but left the event loop's busy time per append unchanged
 * within noise (0.745–0.775 ms against 0.782–1.127 ms), and 15 ms pushed figure 3's lag p99 over
 * 50 ms in 3 of 4 runs (53–89 ms against 26–43 ms at 0) without raising the throughput ratio.
 */
export const DEFAULT_COMMIT_INTERVAL_MS = 0;

const NOT_READY = Symbol('not-ready');

/**
 * A live batch whose events carry at least this much text (UTF-16 code units of their strings) is
 * applied in a worker thread even without the `worker` option: projecting a maximum-size event
 * (indexing it for recall, writing it twice) takes ~100 ms, which would stall every other request.
 */
export const LARGE_BATCH_TEXT = 256 * 1024;

/**
 * Default {@link SessionProjectorOptions.tailCheckIdleMs}: 50 ms. Shorter idle spells (a page read
 * under way, the next append arriving) cost no read of the store; a log ending with deleted events
 * is passed about this long after the projector read the rest.
 */
export const TAIL_CHECK_IDLE_MS = 50;

/** How often (ms) a following projector reads the store's head to find a log that went back below its checkpoint (`endIfLogWentBack`). */
export const LOG_HEAD_CHECK_INTERVAL_MS = 1_000;

/** How long (ms) the worker thread for large batches stays idle before it ends. */
const LARGE_BATCH_WORKER_IDLE_MS = 30_000;

/**
 * Whether the strings in `events`' data add up to at least `limit` code units (stops counting there).
 * A value whose strings were counted when it was validated (`knownStringUnits`: a request's
 * metadata) is not walked again; others are read member by member in place (no list of values made
 * per object: 480,000 metadata keys took ~4× as long with `Object.values`).
 */
function holdsLargeText(events: readonly RecordedEvent[], limit: number): boolean {
  let left = limit;
  const visit = (value: unknown): boolean => {
    if (typeof value === 'string') return (left -= value.length) <= 0;
    if (value === null || typeof value !== 'object') return false;
    const counted = knownStringUnits(value);
    if (counted !== undefined) return (left -= counted) <= 0;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) if (visit(value[i])) return true;
      return false;
    }
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record);
    for (let i = 0; i < keys.length; i++) {
      const member = record[keys[i]];
      if (typeof member === 'string') {
        if ((left -= member.length) <= 0) return true;
      } else if (member !== null && typeof member === 'object' && visit(member)) return true;
    }
    return false;
  };
  return events.some((e) => visit(e.data));
}

/**
 * An erasure record of a session of at least this many events (its `erasedEvents`) makes its batch
 * applied in a worker thread even without the `worker` option: erasing a 30,000-event session's
 * rows took ~3.4 s of one transaction on the 2-core machine (~0.1 ms an event), and smaller ones
 * stay on the event loop, sparing them the thread's start.
 */
export const LARGE_ERASURE_EVENTS = 1000;

/**
 * An erasure record of a session whose logged events (`session_log.data_json`, UTF-8 bytes) add up
 * to at least this much in the read models makes its batch applied in a worker thread too, however
 * few its events: erasing the recall rows costs in proportion to their text (up to ~0.4 µs a byte,
 * text of an unspaced script in the trigram index: 1,000 events of 3,000 CJK characters, 9 MB,
 * took 1.2–3 s), so 64 KiB stays under ~25 ms on the event loop.
 */
export const LARGE_ERASURE_BYTES = 64 * 1024;

/** The erasure records among `events`: tenant and session id. */
function erasuresIn(events: readonly RecordedEvent[]): Array<{ tenantId: string; sessionId: string; erasedEvents: number }> {
  return events.filter(isErasureRecord).map((e) => {
    const data = e.data as Partial<SessionErasedData> | null;
    return { tenantId: e.streamId.slice(ERASURE_STREAM_PREFIX.length), sessionId: String(data?.sessionId), erasedEvents: Number(data?.erasedEvents ?? 0) };
  });
}

/** The worker module, next to this file (`.ts` under ts-node and jest, `.js` once built). */
const WORKER_FILE = path.join(__dirname, `projection-worker-tasks${path.extname(__filename)}`);

/** Node flags of the worker: from sources (ts-node, jest), the hooks that load TypeScript and the `@lib/…` paths. */
function workerExecArgv(): string[] | undefined {
  return path.extname(__filename) === '.ts' ? ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register'] : undefined;
}

/**
 * Follows the whole global log and keeps the read models of `./read-model-schema` up to date from
 * the `session-` streams. A `SessionErased` record of an `erasure-<tenant>` stream erases that
 * session's rows (so every replica forgets an erased session, not only the one that erased it).
 * Events of other streams write no row but move the checkpoint, so it reaches the store's head and `waitForPosition` of any position resolves
 * (KurrentDB system events `$…` are filtered out by the adapter and would be ignored too).
 *
 * A log may end with events this projector never read and never will: deleted before it read
 * them (an erasure interrupted after its stream deletion, before its record; SQLite and
 * PostgreSQL still count them in the head). So after `tailCheckIdleMs` without an event to apply
 * (once per idle spell, and again every `tailCheckIdleMs` while a {@link SessionProjector.waitForPosition}
 * waits past the checkpoint or the start-up catch-up has not reached its head) the projector
 * asks the store for its readable head and whether an event is left up to it
 * (`headToSkipTo`), and takes that head as its checkpoint when none is. The readable head, not
 * the head: every event up to it is visible to the store's reads, so none is ever skipped (on
 * SQLite with the writer thread the head counts a batch committed but not yet readable). That
 * checkpoint is in memory only (the recorded one stays at the last event applied, which it
 * names; a restart passes the deleted events the same way). {@link SessionProjector.rebuild}
 * ends there too.
 *
 * Each batch's rows and the checkpoint are written in ONE SQLite transaction, so a
 * crash (or a throw) never applies an event twice nor skips one; events at or before the
 * checkpoint are ignored, so a redelivered event is harmless.
 *
 * When a batch fails (a {@link MalformedEventError}…) nothing of it is kept; the projector then
 * applies its events one by one, so the events before the failing one are kept, sets
 * `lastError`, and resubscribes from its checkpoint after a growing delay (`retryDelayMs`
 * doubling up to `maxRetryDelayMs`): it retries the failing event, it never skips it.
 */
export class SessionProjector {
  private readonly writer: SessionReadModelWriter;
  private readonly waiters = new PositionWaiters();
  private readonly options: Required<SessionProjectorOptions>;
  private current: bigint;
  private running = false;
  private lastError: string | null = null;
  /** Whether `lastError` is the read models file found damaged (see {@link SessionProjectorState.readModelsDamaged}). */
  private lastErrorDamage = false;
  /** The failure of `lastError` while it is the read models' damage ({@link readModelsDamage}). */
  private lastDamage: Error | null = null;
  /** Whether `lastError` is the read models' disk found full (see {@link SessionProjectorState.readModelsFull}). */
  private lastErrorUnwritable = false;
  private readonly logger = new Logger('Projector');
  private lastErrorAt: string | null = null;
  private subscription: Subscription | null = null;
  private loop: Promise<void> | null = null;
  private wakeSleep: (() => void) | null = null;
  private eventStore: EventStore | null = null;
  /** `performance.now()` when the last live batch started applying; -Infinity before the first. */
  private lastBatchAt = -Infinity;
  /** Ends the current batch's wait for more events (see {@link SessionProjectorOptions.commitIntervalMs}), while one waits. */
  private endGathering: (() => void) | null = null;
  /** The worker thread applying live batches ({@link SessionProjectorOptions.worker}), while started. */
  private pool: Piscina | undefined;
  /** Without the worker option: the worker thread that applies batches holding a very large event ({@link LARGE_BATCH_TEXT}) or a long session's erasure record ({@link LARGE_ERASURE_EVENTS}). */
  private largeBatchPool: Piscina | undefined;
  /** The last position of the batch a worker thread is applying ({@link appliesInWorker}), null when none. */
  private inWorkerUpTo: bigint | null = null;
  private readonly checkpointListeners = new Set<(checkpoint: bigint, committedAtMs: number) => void>();
  private readonly erasureListeners = new Set<(tenantId: string, sessionId: string, recordedAt: Date) => void>();
  private readonly damageListeners = new Set<(error: Error) => void>();
  /** The log's head (bigint) read from the store when the projector last (re)subscribed, until the checkpoint reaches it; null otherwise. */
  private headToReach: bigint | null = null;
  /** Whether the checkpoint has once reached a head read from the store since this object was made (see {@link reachedHeadOnce}). */
  private headReached = false;
  /**
   * While the read models are rebuilt after a schema change (`rebuild`) or catch up with a log far
   * ahead of them (`catch-up`, see {@link SessionProjectorOptions.catchUpLinePositions}): when it
   * started and the last progress line (`performance.now()`, ms), the events applied.
   */
  private rebuilding: { kind: 'rebuild' | 'catch-up'; startedAt: number; loggedAt: number; events: number } | null = null;
  /** True while {@link consume} waits for the first event of a batch: the log has nothing more to give for now. */
  private idle = false;
  /** The event the read models applied that the store's log no longer holds at its position ({@link watchLogHead}): set until the restart. */
  private logReplaced: { position: bigint; recorded: string; found: string } | null = null;
  /** The last event applied while following (its position and {@link checkpointEventIdentity}), checked before each next batch ({@link logReplacedBefore}). */
  private lastApplied: { position: bigint; identity: string } | null = null;
  /** The next check of the log's tail ({@link scheduleTailCheck}), while one is due. */
  private tailCheckTimer: NodeJS.Timeout | null = null;
  /** True while a check of the log's tail reads the store. */
  private checkingTail = false;
  /** Incremented by {@link stop}: a check of the log's tail started before it moves no checkpoint. */
  private generation = 0;

  constructor(
    /** The read models this projector writes. */
    readonly store: ReadModelStore,
    options: SessionProjectorOptions = {},
  ) {
    this.options = {
      maxBatchSize: 500,
      tailCheckIdleMs: TAIL_CHECK_IDLE_MS,
      commitIntervalMs: DEFAULT_COMMIT_INTERVAL_MS,
      rebuildPageSize: 1000,
      retryDelayMs: 100,
      maxRetryDelayMs: 5000,
      rebuildProgressMs: REBUILD_PROGRESS_INTERVAL_MS,
      catchUpLinePositions: Number(CATCH_UP_LINE_POSITIONS),
      worker: false,
      lockWaitMs: EVENT_LOOP_LOCK_WAIT_MS,
      ...options,
    };
    this.writer = new SessionReadModelWriter(store.db);
    this.current = store.readCheckpoint(SESSION_PROJECTOR_NAME);
  }

  /** The global position of the last event applied (bigint), 0n when none. */
  checkpoint(): bigint {
    return this.current;
  }

  /**
   * Whether the read models have once reached the log's head since this projector was made: the
   * head is read from the store each time the projector (re)subscribes (at {@link start}, and after
   * each failure), and this turns true when the checkpoint reaches it. It never turns false again
   * (reads then need not wait for a start-up catch-up, even while the store is down).
   */
  reachedHeadOnce(): boolean {
    return this.headReached;
  }

  /** Checkpoint, running flag and last error, for `/health`. */
  state(): SessionProjectorState {
    const offLog = this.lastError?.startsWith(`${ReadModelsOfAnotherLogError.name}:`) ?? false;
    return {
      checkpoint: this.current,
      running: this.running,
      lastError: this.lastError,
      lastErrorAt: this.lastErrorAt,
      offLog,
      readModelsDamaged: this.lastError !== null && this.lastErrorDamage,
      readModelsFull: this.readModelsFull(),
    };
  }

  /**
   * While the projector refuses to follow the store because the read models were projected from
   * another log ({@link SessionProjectorState.offLog}: the store was restored from an older backup,
   * or replaced, under this running process): what it found and what to do (the text of its
   * {@link ReadModelsOfAnotherLogError}, naming the file); null otherwise. The projector checks again
   * at every retry, so this turns null when the store holds the read models' log again. Reads are
   * refused meanwhile (they would answer sessions the store no longer holds) and so are writes (an
   * acknowledged write could not be read back).
   */
  readModelsOffLog(): string | null {
    const state = this.state();
    if (!state.offLog || state.lastError === null) return null;
    return state.lastError.slice(`${ReadModelsOfAnotherLogError.name}: `.length);
  }

  /**
   * While the projector's last batch failed on the read models found damaged ({@link isReadModelsDamage},
   * another build's rewrite included): that failure; null otherwise (also once a batch commits
   * again). It cannot apply the log until the restart rebuilds them, so reads needing a later
   * position answer it at once (503 `read_models_damaged`) instead of waiting for one it cannot reach.
   */
  readModelsDamage(): Error | null {
    return this.lastError !== null && this.lastErrorDamage ? this.lastDamage : null;
  }

  /**
   * While the projector's last batch failed because the disk holding the read models is full
   * ({@link isReadModelsUnwritable}): why they cannot be written, naming the file, their checkpoint
   * and the remedy; null otherwise (also before any failure, and once a batch commits again).
   * Reads then answer at once instead of waiting for positions the projector cannot reach, and
   * writes are refused, so the log does not run ahead of what reads can show.
   */
  readModelsFull(): string | null {
    if (this.lastError === null || !this.lastErrorUnwritable) return null;
    const { because, until } = unwritableReadModels(this.store.file, this.lastError);
    return `the read models cannot be written: ${because} (${this.lastError}); they stay at position ${this.current} until ${until}`;
  }

  /**
   * Applies `events` (global order) and moves the checkpoint to the last one's position, all in
   * one transaction. Events at or before the checkpoint are skipped; events of streams not named
   * `session-…` only move the checkpoint. Returns the new checkpoint (bigint).
   *
   * @throws MalformedEventError (or a SQLite error) — then no row and not the checkpoint changed.
   */
  applyBatch(events: readonly RecordedEvent[]): bigint {
    const started = performance.now();
    let next = this.current;
    let erased = false;
    let applied = 0;
    const lockWaitMs = this.options.lockWaitMs ?? undefined;
    this.store.transaction(() => {
      let last: RecordedEvent | null = null;
      for (const event of events) {
        if (event.position <= next) continue;
        last = event;
        if (isErasureRecord(event)) {
          // An erasure made by this or another replica: forget the session's rows here too.
          const tenantId = event.streamId.slice(ERASURE_STREAM_PREFIX.length);
          const data = event.data as SessionErasedData;
          erased = this.writer.eraseSession(tenantId, data.sessionId, erasedRowsOf(data)) || erased;
          // What an auditor sees of it (no content): GET /v1/erasures.
          this.writer.recordErasure(tenantId, event);
        } else {
          this.writer.apply(event);
        }
        next = event.position;
        applied++;
      }
      if (last !== null) this.store.writeCheckpoint(SESSION_PROJECTOR_NAME, next, checkpointEventIdentity(last));
    }, lockWaitMs);
    if (erased) this.store.purgeWal();
    if (this.rebuilding) this.rebuilding.events += applied;
    this.advance(next, undefined, performance.now() - started >= LONG_TASK_MS);
    this.announceErasures(events, next);
    return next;
  }

  /**
   * Calls `listener` with the tenant and session id of every erasure record this projector
   * applies (this replica's or another's), on this thread, once its batch committed: e.g. to
   * forget a cached state of the session; and when the store recorded it (`recordedAt`: a record
   * from before this process started is one a rebuild or the catch-up replays). Returns the
   * function that removes it.
   */
  onErasure(listener: (tenantId: string, sessionId: string, recordedAt: Date) => void): () => void {
    this.erasureListeners.add(listener);
    return () => this.erasureListeners.delete(listener);
  }

  /** Tells the erasure listeners about the erasure records among `events` up to `upTo` (a committed checkpoint). */
  private announceErasures(events: readonly RecordedEvent[], upTo: bigint): void {
    if (this.erasureListeners.size === 0) return;
    for (const event of events) {
      if (event.position > upTo || !isErasureRecord(event)) continue;
      const tenantId = event.streamId.slice(ERASURE_STREAM_PREFIX.length);
      for (const listener of this.erasureListeners) listener(tenantId, (event.data as SessionErasedData).sessionId, event.created);
    }
  }

  /**
   * Calls `listener` with the error each time following the log fails on the read models found
   * damaged ({@link isReadModelsDamage}; a batch applied in the worker thread with the
   * {@link ReadModelsDamagedError} remade from the worker's verdict), on this thread: at most once
   * per retry (`retryDelayMs` growing to `maxRetryDelayMs`), never per event. Returns the function
   * that removes it.
   */
  onReadModelsDamage(listener: (error: Error) => void): () => void {
    this.damageListeners.add(listener);
    return () => this.damageListeners.delete(listener);
  }

  /**
   * Calls `listener` after every committed move of the checkpoint, on this thread, with the new
   * checkpoint (bigint) and when its transaction committed (`process.hrtime` in ms, one monotonic
   * clock for every thread; with the worker, readers saw the rows from then on, before this
   * thread's checkpoint moved). Returns the function that removes it.
   */
  onCheckpoint(listener: (checkpoint: bigint, committedAtMs: number) => void): () => void {
    this.checkpointListeners.add(listener);
    return () => this.checkpointListeners.delete(listener);
  }

  /** Moves the checkpoint to `next`; after a `long` batch on this thread, readers waiting for it are served once other requests got their turn. */
  private advance(next: bigint, committedAtMs = Number(process.hrtime.bigint()) / 1e6, long = false): void {
    if (next <= this.current) return;
    this.current = next;
    this.logRebuildProgress();
    this.noteHeadReached();
    if (long) void yieldToIo().then(() => this.waiters.notify(next));
    else this.waiters.notify(next);
    for (const listener of this.checkpointListeners) listener(next, committedAtMs);
  }

  /**
   * Whether the batch holding global position `position` (bigint) is being applied in a worker
   * thread right now (not yet committed): the erasure waits for it rather than erase the same
   * rows on the event loop, where its transaction would wait for the worker's, holding the loop.
   */
  appliesInWorker(position: bigint): boolean {
    return this.inWorkerUpTo !== null && position > this.current && position <= this.inWorkerUpTo;
  }

  /**
   * Resolves `true` once the checkpoint is ≥ `position` (a bigint global position, e.g. an
   * append's `position`), or `false` after `timeoutMs` milliseconds. Never rejects. A batch
   * waiting out `commitIntervalMs` is applied at once instead, and so is the next one while this waits.
   * While the projector has nothing to apply, it checks every `tailCheckIdleMs` whether the log
   * ends with deleted events up to its readable head (see the class docs), so such a head is reached too.
   */
  waitForPosition(position: bigint, timeoutMs: number): Promise<boolean> {
    if (position > this.current) {
      this.endGathering?.();
      this.scheduleTailCheck();
    }
    return this.waiters.wait(position, timeoutMs, () => this.current);
  }

  /**
   * Starts following `eventStore` from the checkpoint (catch-up, then live), applying what is
   * available in batches of up to `maxBatchSize`. Returns at once. Calling it while running does nothing.
   */
  start(eventStore: EventStore): void {
    if (this.running) return;
    this.running = true;
    this.eventStore = eventStore;
    if (this.options.worker && this.store.file !== ':memory:') this.pool = this.newPool(1);
    const replaced = this.store.replacedVersion;
    const missing = this.store.missingSchema;
    const underWay = this.store.rebuildUnderWay();
    if ((replaced !== null || missing !== null || underWay !== null) && !this.headReached && !this.rebuilding) {
      const now = performance.now();
      this.rebuilding = { kind: 'rebuild', startedAt: now, loggedAt: now, events: 0 };
      if (replaced !== null)
        this.logger.log(
          `the read models are rebuilt from the log: ${this.store.file} held version ${replaced}, this release's read models are version ${READ_MODEL_SCHEMA_VERSION} (${replaced > READ_MODEL_SCHEMA_VERSION ? 'a newer build wrote them: this is a rollback' : 'they changed'}), so they were dropped; reads wait for the rebuild (503 projection_behind past their wait)`,
        );
      else if (missing !== null)
        this.logger.warn(
          `the read models are rebuilt from the log: ${this.store.file} held this release's version ${READ_MODEL_SCHEMA_VERSION} without ${missing.join(', ')} (another program changed the file), so they were dropped; reads wait for the rebuild (503 projection_behind past their wait)`,
        );
      else
        this.logger.log(
          `the read models are rebuilt from the log, finishing a rebuild that was interrupted (it started at ${underWay!.startedAt}: ${underWay!.reason}; the process stopped during it): ${this.store.file} resumes at position ${this.current}; reads wait for the rebuild (503 projection_behind past their wait)`,
        );
    }
    this.loop = this.follow(eventStore);
  }

  /** Stops following (closes the subscription) and waits for the current batch to finish. Idempotent. */
  async stop(): Promise<void> {
    this.running = false;
    this.generation++;
    this.endIdle();
    this.wakeSleep?.();
    await this.subscription?.close().catch(() => undefined);
    await this.loop;
    this.loop = null;
    const pools = [this.pool, this.largeBatchPool];
    this.pool = undefined;
    this.largeBatchPool = undefined;
    for (const pool of pools) await pool?.destroy();
  }

  /**
   * Ends the projector's worker threads now, without waiting for the current batch (their
   * connections to the read-model file end with them; a batch they were applying is rolled back by
   * SQLite, its checkpoint with it), and stops following: for a shutdown at its bound, when
   * {@link stop} waits for a store that does not answer. Resolves once the threads ended.
   */
  async endWorkers(): Promise<void> {
    this.running = false;
    this.generation++;
    this.wakeSleep?.();
    const pools = [this.pool, this.largeBatchPool];
    this.pool = undefined;
    this.largeBatchPool = undefined;
    for (const pool of pools) await pool?.destroy();
  }

  /**
   * A pool of one worker thread applying batches to the read-model file. `minThreads` 1: the
   * thread lives as long as the pool; 0: it ends after {@link LARGE_BATCH_WORKER_IDLE_MS} idle.
   */
  private newPool(minThreads: 0 | 1): Piscina {
    // Piscina's code loads with this module (at start-up), not here: loading it in the middle of a
    // live batch would hold the event loop 20–30 ms (see TokenCountingPool).
    return new Piscina({
      filename: WORKER_FILE,
      minThreads,
      maxThreads: 1,
      idleTimeout: LARGE_BATCH_WORKER_IDLE_MS,
      execArgv: workerExecArgv(),
    });
  }

  /**
   * Drops and recreates every read model, then replays the whole log (rows from `session-` streams) from
   * the beginning with `eventStore.readAll`. Stops the projector while it runs and restarts it
   * afterwards when it was running. Readers see partial rows until it returns. The read models
   * record that a rebuild is under way (`reason`) until it is done: when it is interrupted, the
   * next {@link start} says it finishes it, and logs its end.
   * Returns the checkpoint reached (bigint).
   * @throws whatever the store or {@link applyBatch} throws (the projector then stays stopped).
   */
  async rebuild(eventStore: EventStore, reason = REBUILD_COMMAND_REASON): Promise<bigint> {
    const wasRunning = this.running;
    const followed = this.eventStore;
    await this.stop();
    this.store.reset(reason);
    this.current = 0n;
    for (;;) {
      // Not filtered by stream: other streams' events only move the checkpoint (to the head).
      const page = await eventStore.readAll({ fromPosition: this.current, maxCount: this.options.rebuildPageSize });
      if (page.length === 0) break;
      const before = this.current;
      this.applyBatch(page);
      if (this.current === before) break;
    }
    // A log ending with deleted events (an erasure interrupted before its record): its readable head past them.
    const past = await headToSkipTo(eventStore, this.current);
    if (past !== null) this.advance(past);
    this.store.endRebuild();
    if (wasRunning && followed) this.start(followed);
    return this.current;
  }

  /**
   * Deletes the rows of the session `sessionId` of `tenantId` that `rows` names (default every
   * one; an erasure record's, {@link erasedRowsOf}) from every read model, in one transaction
   * (erasure). With a bound, rows of the session beyond it (written again after the deletion) are
   * kept, as when the projector reaches the record (`SessionReadModelWriter.eraseSession`).
   * Returns false when nothing was erased. It does not touch the event store nor the checkpoint:
   * delete the stream first, so that neither a rebuild nor a lagging projector brings the rows back
   * (an event of the deleted stream applied later would re-create them). After an erasure the WAL
   * of the read models is truncated, so no copy of the erased rows is left on disk. `lockWaitMs`:
   * how long (ms) it waits for another connection's write lock (default the connection's busy
   * timeout, 5 s; on the event loop pass {@link EVENT_LOOP_LOCK_WAIT_MS} and retry without blocking).
   * @throws SqliteError `SQLITE_BUSY` ({@link isReadModelsLocked}) when the lock is still held after it (nothing erased).
   */
  eraseSession(tenantId: string, sessionId: string, rows: ErasedRows = ALL_ROWS, lockWaitMs?: number): boolean {
    const erased = this.store.transaction(() => this.writer.eraseSession(tenantId, sessionId, rows), lockWaitMs);
    // The rows are zeroed in the file (secure_delete) and gone from the FTS segments; the WAL
    // still holds the pages as they were before: truncate it.
    if (erased) this.store.purgeWal();
    return erased;
  }

  /**
   * When following starts (or resumes) at least `catchUpLinePositions` behind `head`, outside a
   * rebuild: one line saying so (reads wait for the read models meanwhile), then progress lines
   * and an end line as for a rebuild. Silent, a start of a service whose read models were deleted
   * looked hung for minutes on a large log, its reads answering 503 (newcomer nccapacity).
   */
  private noteLongCatchUp(head: bigint): void {
    if (this.rebuilding || head - this.current < BigInt(this.options.catchUpLinePositions)) return;
    const now = performance.now();
    this.rebuilding = { kind: 'catch-up', startedAt: now, loggedAt: now, events: 0 };
    this.logger.log(
      `the read models in ${this.store.file} are at position ${this.current}, ${head - this.current} positions behind the log's head ${head}: catching up; reads wait for them meanwhile (503 projection_behind past their wait)`,
    );
  }

  /** During a rebuild or a long catch-up, one line on how far it is, at most every `rebuildProgressMs`. */
  private logRebuildProgress(): void {
    if (!this.rebuilding) return;
    const now = performance.now();
    if (now - this.rebuilding.loggedAt < this.options.rebuildProgressMs) return;
    this.rebuilding.loggedAt = now;
    const head = this.headToReach !== null ? ` of ${this.headToReach}` : '';
    const doing = this.rebuilding.kind === 'rebuild' ? 'rebuilding the read models from the log' : 'the read models catch up with the log';
    this.logger.log(`${doing}: at position ${this.current}${head}, ${this.rebuilding.events} events applied`);
  }

  /**
   * When the checkpoint has reached the head read at the last (re)subscription: notes that the
   * read models reached the head once, and ends a failure (`lastError`), logging it, since
   * following works again even when nothing new is in the log to apply (the store answered).
   */
  private noteHeadReached(): void {
    if (this.headToReach === null || this.current < this.headToReach) return;
    this.headToReach = null;
    this.headReached = true;
    if (this.rebuilding) {
      const seconds = ((performance.now() - this.rebuilding.startedAt) / 1000).toFixed(1);
      const done = `${this.rebuilding.events} events applied, up to position ${this.current}, in ${seconds} s`;
      if (this.rebuilding.kind === 'rebuild') {
        this.store.endRebuild();
        this.logger.log(`the read models are rebuilt: ${done}`);
      } else this.logger.log(`the read models caught up with the log: ${done}`);
      this.rebuilding = null;
    }
    if (this.lastError === null) return;
    this.logger.log(`the projector follows the log again, at position ${this.current}`);
    this.lastError = null;
    this.lastErrorAt = null;
  }

  /**
   * Before (re)subscribing: throws {@link ReadModelsOfAnotherLogError} when the read models were
   * projected from another log than `eventStore`'s (see `readModelsOffLog`; `head` is the store's
   * head just read). Read models of a release that did not record their checkpoint's event get the
   * store's event there recorded now. One read of the store.
   */
  private async checkOnThisLog(eventStore: EventStore, head: bigint): Promise<void> {
    const replaced = this.logReplaced;
    if (replaced !== null) {
      // The checkpoint goes back to the event found replaced, so that a restart's check refuses these read models too.
      this.store.writeCheckpoint(SESSION_PROJECTOR_NAME, replaced.position, replaced.recorded);
      throw new ReadModelsOfAnotherLogError(
        `the read models in ${this.store.file} come from another log than the event store's: the event they applied at position ${replaced.position} is not the store's event there now (the store was restored from a backup, or replaced, while this replica ran, and its events were applied on top); stop the service and run npm run rebuild-read-models with its configuration`,
      );
    }
    const checkpoint = this.store.readCheckpointEvent(SESSION_PROJECTOR_NAME);
    const mismatch = await readModelsOffLog(eventStore, checkpoint, head);
    if (mismatch)
      throw new ReadModelsOfAnotherLogError(
        head === 0n
          ? `the read models in ${this.store.file} do not match the event store: ${mismatch.problem}; ${offLogRemedy(mismatch, this.store.file)}`
          : `the read models in ${this.store.file} come from another log than the event store's: ${mismatch.problem} (the store was restored from a backup, or is another database); stop the service and run npm run rebuild-read-models with its configuration`,
      );
    if (checkpoint.position > 0n && checkpoint.event === null) {
      const atCheckpoint = await eventStore.eventAt(checkpoint.position);
      if (atCheckpoint) this.store.recordCheckpointEvent(SESSION_PROJECTOR_NAME, checkpoint.position, checkpointEventIdentity(atCheckpoint));
    }
  }

  private async follow(eventStore: EventStore): Promise<void> {
    let delay = this.options.retryDelayMs;
    while (this.running) {
      let subscription: Subscription | null = null;
      let headWatch: NodeJS.Timeout | null = null;
      try {
        // The head first: once the checkpoint reaches it, the projector has caught up (see reachedHeadOnce), and a failure is over.
        const head = await this.headUnlessStopped(eventStore);
        if (head === null || !this.running) break;
        await this.checkOnThisLog(eventStore, head);
        if (!this.running) break;
        this.headToReach = head;
        this.noteLongCatchUp(head);
        this.noteHeadReached();
        // Not filtered by stream prefix: the checkpoint must pass other streams' positions too.
        const from = this.store.readCheckpointEvent(SESSION_PROJECTOR_NAME);
        this.lastApplied = from.event !== null && from.position > 0n ? { position: from.position, identity: from.event } : null;
        subscription = eventStore.subscribeToAll({ fromPosition: this.current });
        this.subscription = subscription;
        headWatch = this.watchLogHead(eventStore);
        await this.consume(subscription, () => {
          delay = this.options.retryDelayMs;
        });
      } catch (failure) {
        // Read models another build rewrote under this one count as their damage (read-models-replaced.ts).
        const error = asReadModelsReplaced(failure, this.store);
        const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
        // One line when following stops working (not one per retry): reads wait meanwhile, and /health shows lastError.
        if (error instanceof ReadModelsOfAnotherLogError) {
          if (!this.lastError?.startsWith(`${error.name}:`))
            this.logger.error(`${error.message}; the projector applies nothing until then (it checks again at most every ${this.options.maxRetryDelayMs} ms)`);
        } else if (this.lastError === null && isReadModelsLocked(error))
          this.logger.warn(
            `the read models in ${this.store.file} are locked by another connection (${message.slice(0, 300)}: another process holds the file's write lock, e.g. a sqlite3 shell with an open transaction); the projector retries (at most every ${this.options.maxRetryDelayMs} ms), and reads needing a later position than ${this.current} wait for it meanwhile (503 projection_behind after their wait)`,
          );
        else if (this.lastError === null && isReadModelsUnwritable(error)) {
          const { because, until } = unwritableReadModels(this.store.file, message);
          this.logger.warn(
            `the read models cannot be written: ${because} (${message.slice(0, 300)}); writes answer 503 store_unavailable and reads needing a later position than ${this.current} 503 projection_behind until ${until}; the projector retries (at most every ${this.options.maxRetryDelayMs} ms)`,
          );
        } else if (this.lastError === null && error instanceof EventStoreCorruptError)
          // A damaged or replaced store file: nothing changes until a restart (newcomer ncverify70: the line said it retries, cut mid-path).
          this.logger.warn(
            `the projector cannot follow the log: the event store refuses every operation (${error.message}); it applies nothing more until the service is restarted (writes answer 503 store_corrupt)`,
          );
        else if (this.lastError === null)
          this.logger.warn(
            `the projector cannot follow the log: ${message.slice(0, 300)}${message.length > 300 ? '…' : ''}; it retries (at most every ${this.options.maxRetryDelayMs} ms), and reads wait for it meanwhile`,
          );
        this.lastError = message;
        this.lastErrorAt = new Date().toISOString();
        this.lastErrorDamage = isReadModelsDamage(error);
        this.lastDamage = this.lastErrorDamage ? (error as Error) : null;
        this.lastErrorUnwritable = isReadModelsUnwritable(error);
        if (this.lastErrorDamage) for (const listener of this.damageListeners) listener(error as Error);
      } finally {
        if (headWatch !== null) clearInterval(headWatch);
        await subscription?.close().catch(() => undefined);
        this.subscription = null;
      }
      if (!this.running) break;
      await this.sleep(delay);
      delay = Math.min(delay * 2, this.options.maxRetryDelayMs);
    }
  }

  /**
   * Pulls events into batches: a batch takes the events already available and, until
   * `commitIntervalMs` after the previous batch started, those that arrive meanwhile. A batch
   * ends where an append ends ({@link mayContinueAppend}): past `maxBatchSize` it goes on while
   * the next event may continue the last one's append (up to
   * (1 + {@link MAX_APPEND_COMPLETION_PAGES}) × `maxBatchSize`, as the store's pages), and it ends
   * early only when no event is available, which the store's pages make the end of an append
   * too. So no reader sees part of an append, e.g. a compaction's archive without its summary.
   * Returns when the subscription ends.
   */
  private async consume(subscription: Subscription, onSuccess: () => void): Promise<void> {
    const iterator = subscription[Symbol.asyncIterator]();
    let pending: Promise<IteratorResult<RecordedEvent>> = iterator.next();
    while (this.running) {
      this.idle = true;
      this.scheduleTailCheck();
      let first: IteratorResult<RecordedEvent>;
      try {
        first = await pending;
      } finally {
        this.endIdle();
      }
      if (first.done) return;
      const batch: RecordedEvent[] = [first.value];
      let ended = false;
      pending = iterator.next();
      // A reader waiting for a position (read-your-writes) gets the batch without the interval.
      const gathering = this.gatherUntil(this.waiters.size > 0 ? 0 : this.lastBatchAt + this.options.commitIntervalMs);
      try {
        while (batch.length < (1 + MAX_APPEND_COMPLETION_PAGES) * this.options.maxBatchSize) {
          const result = await Promise.race([pending, gathering.ended]);
          if (result === NOT_READY) break;
          if (result.done) {
            ended = true;
            break;
          }
          if (batch.length >= this.options.maxBatchSize && !mayContinueAppend(batch[batch.length - 1], result.value)) {
            pending = Promise.resolve(result); // the first event of the next batch
            break;
          }
          batch.push(result.value);
          pending = iterator.next();
        }
      } finally {
        gathering.end();
      }
      this.lastBatchAt = performance.now();
      if (await this.logReplacedBefore(batch)) return;
      await this.applyLive(batch);
      const last = batch[batch.length - 1];
      if (last.position <= this.current) this.lastApplied = { position: last.position, identity: checkpointEventIdentity(last) };
      if (this.lastError !== null) this.logger.log(`the projector follows the log again, at position ${this.current}`);
      this.lastError = null;
      this.lastErrorAt = null;
      onSuccess();
      if (ended) return;
    }
  }

  /**
   * Whether `events` hold the erasure record of a session of at least {@link LARGE_ERASURE_EVENTS}
   * events, or of one whose rows in these read models hold at least {@link LARGE_ERASURE_BYTES} (one
   * indexed read of `session_log` per record: its rows' sizes, not their text).
   */
  private holdsLargeErasure(events: readonly RecordedEvent[]): boolean {
    return erasuresIn(events).some(
      ({ tenantId, sessionId, erasedEvents }) =>
        erasedEvents >= LARGE_ERASURE_EVENTS || loggedBytesOfSession(this.store, tenantId, sessionId) >= LARGE_ERASURE_BYTES,
    );
  }

  /**
   * Applies a live batch, on this thread or in the worker. When it fails, keeps the progress that
   * is possible (the events before the failing one, one by one) and throws the failing one's error.
   */
  private async applyLive(batch: RecordedEvent[]): Promise<void> {
    // On the event loop, a batch holding a very large event, or the erasure record of a long session,
    // is applied in a worker thread too (started on first need): erasing a 30,000-event session's rows
    // (its recall index included) took ~3.4 s of one transaction, which held every other request that long.
    // The worker commits the same one transaction, so readers see the rows before it or none after.
    const pool =
      this.pool ??
      (this.store.file !== ':memory:' && (holdsLargeText(batch, LARGE_BATCH_TEXT) || this.holdsLargeErasure(batch))
        ? (this.largeBatchPool ??= this.newPool(0))
        : undefined);
    if (!pool) {
      try {
        this.applyBatch(batch);
      } catch (error) {
        // Event by event finds the failing one; a lock held by another connection fails them all (each after its wait).
        if (batch.length === 1 || isReadModelsLocked(error)) throw error;
        for (const event of batch) this.applyBatch([event]);
      }
      return;
    }
    const before = this.current;
    this.inWorkerUpTo = batch[batch.length - 1].position;
    const outcome = (await pool.run({ file: this.store.file, events: batch } satisfies ApplyBatchTask).finally(() => {
      this.inWorkerUpTo = null;
    })) as ApplyBatchOutcome;
    if (this.rebuilding) this.rebuilding.events += batch.filter((e) => e.position > before && e.position <= outcome.checkpoint).length;
    this.advance(outcome.checkpoint, outcome.committedAtMs);
    // The worker thread truncated the WAL after an erasure, or retries it there: this thread's
    // connection checks too (a no-op on an empty WAL), so a refused scrub is retried and shown here.
    if (batch.some((event) => event.position <= outcome.checkpoint && isErasureRecord(event))) this.store.purgeWal();
    this.announceErasures(batch, outcome.checkpoint);
    const failure = outcome.error;
    if (failure?.readModelsDamaged) throw new ReadModelsDamagedError(failure.name, failure.message);
    if (failure) throw Object.assign(new Error(failure.message), { name: failure.name }, failure.code === undefined ? {} : { code: failure.code });
  }

  /**
   * A promise of {@link NOT_READY} at `performance.now()` time `due` (ms), or, when `due` has
   * passed, after the events already available (the next macrotask); {@link waitForPosition} or
   * `end()` settles it sooner.
   */
  private gatherUntil(due: number): { ended: Promise<typeof NOT_READY>; end: () => void } {
    let end: () => void = () => undefined;
    const ended = new Promise<typeof NOT_READY>((resolve) => {
      const wait = due - performance.now();
      const timer = wait > 0 ? setTimeout(done, wait) : null;
      const immediate = wait > 0 ? null : setImmediate(done);
      function done(): void {
        if (timer) clearTimeout(timer);
        if (immediate) clearImmediate(immediate);
        resolve(NOT_READY);
      }
      end = done;
    });
    this.endGathering = end;
    return {
      ended,
      end: () => {
        end();
        if (this.endGathering === end) this.endGathering = null;
      },
    };
  }

  /**
   * While {@link consume} waits for events: checks the log's tail after `tailCheckIdleMs`, unless
   * an event comes first, or a check is due or under way already.
   */
  private scheduleTailCheck(): void {
    if (!this.idle || this.tailCheckTimer !== null || this.checkingTail) return;
    this.tailCheckTimer = setTimeout(() => {
      this.tailCheckTimer = null;
      void this.checkTail();
    }, this.options.tailCheckIdleMs);
  }

  /**
   * Ends the subscription when the store's readable `head` is below the checkpoint: heads never go
   * back on one log, so the log the read models follow is gone (a store emptied, restored or replaced
   * under this replica, newcomer ncdata69 F1: appends were acknowledged at positions the read models
   * had passed and never projected, while `/health` said ok). Following again then checks the
   * checkpoint against the store ({@link checkOnThisLog}), which says so: reads answer 503
   * `read_models_off_log`. Returns whether it ended it.
   */
  private async endIfLogWentBack(head: bigint): Promise<boolean> {
    if (head >= this.current) return false;
    await this.subscription?.close().catch(() => undefined);
    return true;
  }

  /**
   * Before a batch read while following is applied: whether the store's event at the position last
   * applied ({@link lastApplied}) is no longer the one applied there, i.e. the log was replaced under
   * this replica between them (a `pg_restore --clean --single-transaction` of a fork of this log,
   * newcomer ncrecheck70 F4: the batch held the fork's events, which were applied on top, and the
   * watch of the checkpoint every second, made on both logs' shared part, passed). Then the batch is
   * not applied, the subscription ends and following again finds the read models off the log
   * ({@link checkOnThisLog}). Read after the batch was, so a replacement before the batch's read is
   * seen at this batch, and one after it at the next. A position whose event is gone (erased) proves
   * nothing. One point read of the store per batch.
   */
  private async logReplacedBefore(batch: readonly RecordedEvent[]): Promise<boolean> {
    const last = this.lastApplied;
    const eventStore = this.eventStore;
    if (last === null || eventStore === null || batch[0].position <= last.position) return false;
    const at = await eventStore.eventAt(last.position);
    const found = at === null ? null : checkpointEventIdentity(at);
    if (found === null || found === last.identity) return false;
    this.logReplaced = { position: last.position, recorded: last.identity, found };
    await this.subscription?.close().catch(() => undefined);
    return true;
  }

  /**
   * While following: every {@link LOG_HEAD_CHECK_INTERVAL_MS}, {@link endIfLogWentBack} on the store's readable head, then
   * whether the event the read models' checkpoint named at the previous check is still the store's at that position: a
   * log restored or replaced under this replica with a head at or past the checkpoint (`pg_restore --clean` of another
   * log) was followed on top of the read models, which then served sessions the store no longer held (newcomer
   * ncrecheck69 N2). A position whose event is gone (erased) proves nothing. On a mismatch the subscription ends and
   * following again finds the read models off the log ({@link checkOnThisLog}). Two reads of the store at most; a store
   * that does not answer is the subscription's to report.
   */
  private watchLogHead(eventStore: EventStore): NodeJS.Timeout {
    const generation = this.generation;
    let verified: CheckpointEvent | null = null;
    // One check at a time: a check whose reads outlast the interval (a store stalled for seconds) is not overlapped by the
    // next, which would move `verified` on under it, and the event at the old checkpoint would be compared with the new
    // checkpoint's (newcomer ncrecheck74 N1: "from another log" and 503 until a restart, after a 1.2–2.5 s stall).
    let checking = false;
    const check = async (): Promise<void> => {
      const expected = verified;
      const head = await eventStore.readableHead();
      if (generation !== this.generation || (await this.endIfLogWentBack(head))) return;
      if (expected !== null && expected.event !== null && expected.position > 0n && expected.position <= head) {
        const at = await eventStore.eventAt(expected.position);
        const found = at === null ? null : checkpointEventIdentity(at);
        if (generation !== this.generation) return;
        if (found !== null && found !== expected.event) {
          this.logReplaced = { position: expected.position, recorded: expected.event, found };
          await this.subscription?.close().catch(() => undefined);
          return;
        }
      }
      verified = this.store.readCheckpointEvent(SESSION_PROJECTOR_NAME);
    };
    const timer = setInterval(() => {
      if (checking) return;
      checking = true;
      void check()
        .catch(() => undefined)
        .finally(() => (checking = false));
    }, LOG_HEAD_CHECK_INTERVAL_MS);
    timer.unref();
    return timer;
  }

  /** {@link consume} has an event again (or stops): no check of the log's tail is due. */
  private endIdle(): void {
    this.idle = false;
    if (this.tailCheckTimer !== null) clearTimeout(this.tailCheckTimer);
    this.tailCheckTimer = null;
  }

  /**
   * Takes the store's readable head as the checkpoint when no event is left after the checkpoint
   * up to it (`headToSkipTo`: the log ends with deleted events this projector never read). A head
   * below the checkpoint (heads never go back on one log) ends the subscription, so that following
   * again finds the read models off the log ({@link checkOnThisLog}). Then,
   * while a reader waits past the checkpoint or the start-up catch-up has not reached its head,
   * checks again after `tailCheckIdleMs` (events deleted later, a batch readable later).
   * Nothing when the projector stopped meanwhile, or the store does not answer (following it
   * fails too, and says so: `lastError`).
   */
  private async checkTail(): Promise<void> {
    const eventStore = this.eventStore;
    if (!this.running || !eventStore) return;
    const generation = this.generation;
    this.checkingTail = true;
    try {
      const head = await eventStore.readableHead();
      if (generation === this.generation && (await this.endIfLogWentBack(head))) return;
      // Events read meanwhile all come after this checkpoint's readable head, if it is taken: none up to it is left.
      const past = await headToSkipTo(eventStore, this.current, head);
      if (past !== null && generation === this.generation) this.advance(past);
    } catch {
      // The store does not answer: the subscription reports it.
    } finally {
      this.checkingTail = false;
    }
    if (this.waiters.size > 0 || this.headToReach !== null) this.scheduleTailCheck();
  }

  /** The store's head (bigint), or null once {@link stop} is called meanwhile (a store that does not answer does not hold the shutdown). */
  private headUnlessStopped(eventStore: EventStore): Promise<bigint | null> {
    return new Promise<bigint | null>((resolve, reject) => {
      this.wakeSleep = () => resolve(null);
      eventStore.headPosition().then(resolve, reject);
    }).finally(() => {
      this.wakeSleep = null;
    });
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wakeSleep = done;
    }).finally(() => {
      this.wakeSleep = null;
    });
  }
}

/** Whether `event` is an erasure record (`SessionErased` in a tenant's erasure stream). */
function isErasureRecord(event: RecordedEvent): boolean {
  return event.type === SESSION_ERASED && event.streamId.startsWith(ERASURE_STREAM_PREFIX);
}
