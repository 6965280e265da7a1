import { DatabaseError, Pool, type PoolClient, type PoolConfig, type QueryConfig, type QueryResultRow } from 'pg';
import { prepareAppend, type SerializedEvent } from '../append-input';
import { COPY_MARKER_TABLE, UNKNOWN_COPY_MARKER } from '../copy-marker';
import {
  EventStoreClosedError,
  EventStoreCopyInProgressError,
  EventStoreDatabaseEncodingError,
  EventStoreHeadBehindError,
  EventStoreSchemaNewerError,
  EventStoreUnavailableError,
  WrongExpectedRevisionError,
  WrongIncarnationError,
} from '../errors';
import type {
  PoolConnections,
  AppendOptions,
  DeleteStreamOptions,
  AppendResult,
  EventData,
  EventStore,
  ExpectedRevision,
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
  SubscribeOptions,
  Subscription,
} from '../event-store.port';
import { lookedUpIds, resolveExistingIds, storedRowOf, type StoredEventRow } from '../idempotent-retry';
import type { HeldClaim } from '../claim.port';
import type { LogCopy } from '../log-copy.port';
import { PostgresClaims } from './postgres-claims';
import { PoolCheckouts } from './pool-checkouts';
import { PollingSubscriptions } from '../polling-subscriptions';
import { PostgresLogCopy } from './postgres-log-copy';
import { SERVICE_APPLICATION_NAME } from './postgres-application-name';
import { recordedFromRow } from '../recorded-from-row';
import { MAX_REVISION } from '../revision-text';
import { AnswerLostError, lostAnswerOf, withKnownOutcome } from './lost-answer';
import { noAnswerOf } from './no-answer';
import { connectFailure, mapPostgresError, postgresUnavailableMessage, READ_ONLY_SQL_TRANSACTION, UNIQUE_VIOLATION } from './postgres-errors';
import {
  POSTGRES_APPEND_BODY,
  POSTGRES_APPEND_IN_LIFE_BODY,
  POSTGRES_CREATED_DEFAULT,
  POSTGRES_CREATED_DEFAULT_SQL,
  POSTGRES_SCHEMA_LOCK_KEY,
  POSTGRES_SCHEMA_SQL,
  POSTGRES_SCHEMA_STATE_SQL,
  POSTGRES_SCHEMA_VERSION,
  POSTGRES_SCHEMA_VERSION_SQL,
  postgresHeadAndLastSql,
} from './postgres-schema';
import { POSTGRES_TABLE_COLUMNS, POSTGRES_TABLE_COLUMNS_SQL, schemaShapeMismatch, type TableColumnRow } from './postgres-schema-shape';
import {
  ANSWER_MARGIN_MS,
  DEFAULT_POOL_SIZE,
  DEFAULT_STATEMENT_TIMEOUT_MS,
  SCHEMA_SETUP_TIMEOUT_MS,
  answerTimeoutMs,
  sessionSettingsSql,
} from './postgres-settings';

/** Options of {@link PostgresEventStore.connect}. */
export interface PostgresEventStoreOptions {
  /**
   * Most pooled connections of this store (default {@link DEFAULT_POOL_SIZE}): each process (service
   * replica) opens up to this many connections to the server, so the server's `max_connections` must
   * exceed replicas × this plus the other clients' (psql, backups, superuser_reserved_connections).
   */
  maxConnections?: number;
  /**
   * The longest (ms) one statement of this store may run on the server, waiting for locks included
   * (default {@link DEFAULT_STATEMENT_TIMEOUT_MS}): each pooled connection is given
   * `statement_timeout` and `lock_timeout` of this value by its first statement, so a statement
   * blocked by another transaction's lock (a maintenance transaction holding `es_head`, `VACUUM FULL`
   * or `LOCK TABLE es_events`) is canceled by the server (SQLSTATE 57014 or 55P03, rolled back:
   * nothing written) and answered as EventStoreUnavailableError. 0 sets neither: the role's or
   * database's settings apply. The schema setup runs under {@link SCHEMA_SETUP_TIMEOUT_MS} instead.
   *
   * It also sets the client-side bound on every answer ({@link answerTimeoutMs}: this + 5000 ms, or
   * 65 000 ms for 0; the schema setup's statements {@link SCHEMA_SETUP_TIMEOUT_MS} + 5000 ms): a
   * statement the server does not answer by then (a frozen server, which never applies its own
   * timeouts) fails with `PostgresNoAnswerError` (no-answer.ts), its connection closed: a read answers
   * EventStoreUnavailableError, a write's answer is lost (run again until its outcome is known, see
   * {@link PostgresEventStore}).
   */
  statementTimeoutMs?: number;
  /**
   * How long (ms) to wait for a connection (a new one, or a pooled one to become free under load)
   * before failing with EventStoreUnavailableError (default 10000). A stopped server is refused at once.
   * {@link PostgresEventStore.close} ends these waits at once (EventStoreClosedError).
   * Also how long after a write's lost answer the write may be run again to learn its outcome
   * (see {@link PostgresEventStore}).
   */
  connectionTimeoutMs?: number;
  /** How often (ms) an idle live subscription re-reads the log to see other processes' appends (default 50). */
  pollIntervalMs?: number;
  /**
   * The connections' `application_name` (default {@link SERVICE_APPLICATION_NAME}; the claims' connection gets
   * ` claims` after it): how `pg_stat_activity` names them. `npm run copy-store` gives its target connections its
   * own, so that it tells them from a service's ({@link LogCopy.otherUsers}).
   */
  applicationName?: string;
  /** Events per page when a subscription catches up (default 512). */
  subscriptionPageSize?: number;
  /**
   * The message of the EventStoreUnavailableError for a driver error that says the server cannot be
   * reached or cannot serve now (default `PostgreSQL event store: <the driver's message>`): the
   * service's names the setting (`DATABASE_URL`, credentials masked) and what to fix.
   */
  describeUnavailable?: (error: unknown) => string;
  /**
   * Use a database that holds a copy's mark (`es_copy_in_progress`, see copy-marker.ts) too
   * (default false: the schema set-up refuses it with EventStoreCopyInProgressError, nothing
   * changed). Only `npm run copy-store`, on its target.
   */
  acceptCopyInProgress?: boolean;
}

/** Row shape of `es_events` as the driver returns it (int8 as decimal strings). */
interface EventRow {
  position: string;
  stream: string;
  revision: string;
  id: string;
  type: string;
  data: string;
  metadata: string | null;
  created: Date;
}

/** {@link POSTGRES_SCHEMA_STATE_SQL}'s row. */
interface SchemaStateRow {
  has_tables: boolean;
  has_deleted: boolean;
  /** `es_events.created`'s default as `pg_get_expr` prints it (`now()` before 2026-12-03), null without the table. */
  created_default: string | null;
  append_body: string | null;
  append_in_life_body: string | null;
  has_version_table: boolean;
  has_copy_marker: boolean;
  has_head: boolean;
}

/**
 * The one line saying what a schema setup changed on a database that held `before` (null: nothing
 * changed), e.g. `PostgreSQL event store schema set up for version 2: ALTER TABLE es_streams ADD
 * COLUMN deleted; ALTER TABLE es_events ALTER COLUMN created SET DEFAULT clock_timestamp() (was
 * now()); created function es_append_v2; recorded schema version 2 (was none)`.
 */
export function schemaChangeLine(before: SchemaStateRow, recordedVersion: number | null): string | null {
  if (!before.has_tables) return `PostgreSQL event store schema created (version ${POSTGRES_SCHEMA_VERSION})`;
  const changes: string[] = [];
  if (!before.has_deleted) changes.push('ALTER TABLE es_streams ADD COLUMN deleted');
  if (createdDefaultDiffers(before)) changes.push(`${POSTGRES_CREATED_DEFAULT_SQL} (was ${before.created_default ?? 'none'})`);
  if (before.append_body === null) changes.push('created function es_append_v2');
  else if (before.append_body !== POSTGRES_APPEND_BODY) changes.push('replaced function es_append_v2 (its body differed)');
  if (before.append_in_life_body === null) changes.push('created function es_append_in_life_v1');
  else if (before.append_in_life_body !== POSTGRES_APPEND_IN_LIFE_BODY) changes.push('replaced function es_append_in_life_v1 (its body differed)');
  if (recordedVersion === null || recordedVersion < POSTGRES_SCHEMA_VERSION)
    changes.push(`recorded schema version ${POSTGRES_SCHEMA_VERSION} (was ${recordedVersion ?? 'none'})`);
  return changes.length === 0 ? null : `PostgreSQL event store schema set up for version ${POSTGRES_SCHEMA_VERSION}: ${changes.join('; ')}`;
}

/** True when the database has `es_events` and its `created` default is not {@link POSTGRES_CREATED_DEFAULT} (set up before 2026-12-03). */
function createdDefaultDiffers(before: SchemaStateRow): boolean {
  return before.has_tables && before.created_default !== POSTGRES_CREATED_DEFAULT;
}

interface AppendRow {
  outcome: 'ok' | 'wrong_revision' | 'ids_exist' | 'retry' | 'wrong_life';
  revision: string | null;
  position: string | null;
  /** `es_append_in_life_v1` only: the stream's incarnation. */
  incarnation?: string | null;
}

const COLUMNS = 'position, stream, revision, id, type, data, metadata, created';
/** A stream being created by two appends at once makes one of them call again; bounded. */
const MAX_APPEND_ATTEMPTS = 8;
/** Default of {@link PostgresEventStoreOptions.connectionTimeoutMs} (ms). */
const DEFAULT_CONNECTION_TIMEOUT_MS = 10_000;

/**
 * Error of a pooled connection whose first statement (its session settings) got no answer within
 * the connect timeout: a pooler (pgbouncer in session mode) accepted the connection but has no
 * server connection to give it. The connection is closed; nothing of the caller's was sent.
 */
export class ConnectionNotReadyError extends Error {
  override readonly name = 'ConnectionNotReadyError';
  /** A node-style code, so that the error reads as the server not reachable now. */
  readonly code = 'ETIMEDOUT';
  constructor(readonly withinMs: number) {
    super(
      `no answer to a new connection's first statement within ${withinMs} ms (a connection pooler in front of PostgreSQL, e.g. pgbouncer in session mode, accepted it but has no free server connection: raise its pool size, see docs/stores.md, "Connections, timeouts and poolers")`,
    );
  }
}

/**
 * The PostgreSQL adapter, on the `pg` driver (a connection pool) and its own schema
 * (`postgres-schema.ts`, created on first use). Several processes (service replicas) may share one
 * database: the expected-revision check and the insert run in one transaction holding the
 * stream's row lock, so they are atomic across processes.
 *
 * Global positions: bigint, 1n-based, contiguous (a rolled-back append rolls its head update back
 * too); gaps appear only after deletions. They are assigned under the
 * `es_head` row lock held until commit, so they become visible in increasing order and a
 * subscription that reads `position > checkpoint` never skips an event committed late.
 *
 * Idempotency: a retry with the same ids at the same expected revision returns the original result
 * (ids are unique in the whole store, as with SQLite). Erasure: `deleteStream` deletes the rows
 * (hard delete); PostgreSQL reclaims their space at the next VACUUM (autovacuum).
 * Errors reaching the server become {@link EventStoreUnavailableError}; the pool reconnects by
 * itself when the server is back.
 *
 * A write whose connection is lost after it was sent, before the server's answer, may have
 * committed or not. The adapter does not answer until it knows: it runs the same write again on
 * another connection (`withKnownOutcome`, within `connectionTimeoutMs` of the loss), where the
 * append's id check answers the original result when the lost run committed (and writes it when it
 * did not), and a deletion finds the life it was to delete gone. Only when the server cannot be
 * reached again in that time does it answer {@link WriteOutcomeUnknownError} (an
 * EventStoreUnavailableError that, unlike the others, does not mean that nothing was written).
 * An error the server answered (a SQLSTATE) means the statement was rolled back: answered at once.
 */
export class PostgresEventStore implements EventStore {
  /** The schema setup under way or done: resolves true (the schema is there), or false (none, its creation held: not kept). */
  private schemaReady: Promise<boolean> | null = null;
  /** {@link holdSchemaCreation}: a database without the store's tables is not set up until {@link releaseSchemaCreation}. */
  private schemaCreationHeld = false;
  private closed = false;
  private readonly subscriptions: PollingSubscriptions;
  /** Where schema change lines go (see {@link reportSchemaChanges}); until set, they wait in `pendingSchemaChanges`. */
  private schemaChangeListener: ((line: string) => void) | null = null;
  private pendingSchemaChanges: string[] = [];
  /** {@link PostgresEventStoreOptions.connectionTimeoutMs}. */
  private readonly connectionTimeoutMs: number;
  /** {@link PostgresEventStoreOptions.acceptCopyInProgress}. */
  private readonly acceptCopyInProgress: boolean;
  /** {@link PostgresEventStoreOptions.describeUnavailable}. */
  private readonly describeUnavailable: (error: unknown) => string;
  /** The session settings each pooled connection runs first (its bound: {@link checkout}). */
  private readonly sessionSql: string;
  /** Pooled connections that ran {@link sessionSql}. */
  private readonly ready = new WeakSet<PoolClient>();
  /** The client-side bound (ms) on one statement's answer, the pool's `query_timeout` ({@link answerTimeoutMs}). */
  private readonly answerTimeoutMs: number;
  /** Every connection of the pool is asked for through this queue (see {@link PoolCheckouts}): none waits in the pool's own. */
  private readonly checkouts: PoolCheckouts<PoolClient>;

  private constructor(
    private readonly pool: Pool,
    options: PostgresEventStoreOptions,
    /** {@link tryClaim}'s dedicated connection. */
    private readonly claims: PostgresClaims,
  ) {
    this.connectionTimeoutMs = options.connectionTimeoutMs ?? DEFAULT_CONNECTION_TIMEOUT_MS;
    this.acceptCopyInProgress = options.acceptCopyInProgress === true;
    this.describeUnavailable = options.describeUnavailable ?? postgresUnavailableMessage;
    this.sessionSql = sessionSettingsSql(options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS);
    this.answerTimeoutMs = answerTimeoutMs(options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS);
    this.subscriptions = new PollingSubscriptions((o) => this.readAll(o), options.pollIntervalMs ?? 50, options.subscriptionPageSize ?? 512);
    this.checkouts = new PoolCheckouts(
      // A failure here is one of opening a connection (pg-pool hands an idle one over without connecting): marked so.
      () =>
        pool.connect().catch((error: unknown) => {
          throw connectFailure(error);
        }),
      (client) => client.release(),
      options.maxConnections ?? DEFAULT_POOL_SIZE,
      this.connectionTimeoutMs,
    );
    // Every release of a connection (back to the pool, or closed) frees its place in the queue.
    pool.on('release', (_error: unknown, client: PoolClient) => this.checkouts.returned(client));
    // An idle pooled connection dropped by the server must not crash the process; the pool replaces it.
    pool.on('error', () => undefined);
    // Nor one the server ends while it is checked out between two statements (pg-pool listens only while a
    // connection is idle): e.g. "terminating connection due to administrator command" when PostgreSQL stops.
    // Such a connection is no longer queryable: its next statement fails (a lost answer, handled as any),
    // and the pool drops it on release.
    pool.on('connect', (client) => client.on('error', () => undefined));
  }

  /**
   * A store on the database of `connectionString` (`postgres://user@host:port/db`). Connects
   * lazily: errors appear on first use, as EventStoreUnavailableError. Every statement waits at most
   * {@link answerTimeoutMs} for its answer (the driver's `query_timeout`; see
   * {@link PostgresEventStoreOptions.statementTimeoutMs}).
   */
  static connect(connectionString: string, options: PostgresEventStoreOptions = {}): PostgresEventStore {
    const config: PoolConfig = {
      connectionString,
      max: options.maxConnections ?? DEFAULT_POOL_SIZE,
      connectionTimeoutMillis: options.connectionTimeoutMs ?? DEFAULT_CONNECTION_TIMEOUT_MS,
      idleTimeoutMillis: 30_000,
      // The driver fails a statement unanswered by then (rejects it; its connection keeps the statement
      // pending, so this store closes that connection: release(true), never back to the pool).
      query_timeout: answerTimeoutMs(options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS),
      application_name: options.applicationName ?? SERVICE_APPLICATION_NAME,
    };
    const describeUnavailable = options.describeUnavailable ?? postgresUnavailableMessage;
    const { connectionString: url, connectionTimeoutMillis, query_timeout, application_name } = config;
    const claims = new PostgresClaims({ connectionString: url, connectionTimeoutMillis, query_timeout, application_name }, describeUnavailable);
    return new PostgresEventStore(new Pool(config), options, claims);
  }

  /**
   * Holds the creation of the schema in a database that holds none of the store's tables (a new
   * database, or one dropped and created again) until {@link releaseSchemaCreation}: meanwhile the
   * setup still refuses what it refuses (a newer version, a copy's mark, another application's
   * tables, an encoding other than UTF8) but creates nothing in such a database, {@link headPosition}
   * answers 0n (its log is empty), and every other operation rejects with EventStoreUnavailableError.
   * A database that has the tables is set up (upgraded) as usual. So a start that checks its read models
   * against the log, and refuses, leaves a new database as it found it: a `pg_restore` into it then
   * does not collide with a schema created by the refused start (newcomer ncpg73 F3).
   */
  holdSchemaCreation(): void {
    this.schemaCreationHeld = true;
  }

  /** Ends {@link holdSchemaCreation}: the next operation creates the schema in a database without it. */
  releaseSchemaCreation(): void {
    this.schemaCreationHeld = false;
  }

  /**
   * Sends `listener` one line each time this store's schema setup changed the database (created
   * it, added a column, created or replaced its append function, recorded a newer version; see
   * {@link schemaChangeLine}), first the lines of setups done before it was called.
   */
  reportSchemaChanges(listener: (line: string) => void): void {
    this.schemaChangeListener = listener;
    for (const line of this.pendingSchemaChanges.splice(0)) listener(line);
  }

  /**
   * See {@link EventStore.appendToStream}. Resolves once the append is committed. An append whose
   * answer was lost is run again until its outcome is known (see the class docs). With
   * `options.incarnation`, the append runs as `es_append_in_life_v1`, which checks the stream's
   * life under its row lock, in the append's statement (postgres-schema.ts).
   * @throws WriteOutcomeUnknownError when the server could not be reached again after a lost answer.
   */
  async appendToStream(stream: string, events: EventData[], options: AppendOptions = {}): Promise<AppendResult> {
    const expected = options.expectedRevision ?? 'any';
    const { incarnation } = options;
    const serialized = prepareAppend(stream, events, expected, incarnation);
    const result = await this.guard(() => withKnownOutcome(() => this.append(stream, serialized, expected, incarnation), this.knownOutcome('append', stream)));
    this.subscriptions.wake();
    return result;
  }

  /** See {@link EventStore.readStream}. */
  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const backwards = options.direction === 'backwards';
    const from = options.fromRevision ?? (backwards ? 'end' : 'start');
    const limit = options.maxCount ?? null;
    if (limit === 0) return [];
    if (!backwards && from === 'end') return [];
    const rows = await this.guard(() =>
      backwards
        ? this.query<EventRow>(
            `SELECT ${COLUMNS} FROM es_events WHERE stream = $1 AND ($2::bigint IS NULL OR revision <= $2) AND revision >= $4 ORDER BY revision DESC LIMIT $3`,
            [stream, from === 'end' ? null : from === 'start' ? '0' : from.toString(), limit, (options.toRevision ?? 0n).toString()],
          )
        : this.query<EventRow>(`SELECT ${COLUMNS} FROM es_events WHERE stream = $1 AND revision >= $2 AND revision <= $4 ORDER BY revision ASC LIMIT $3`, [
            stream,
            from === 'start' ? '0' : from.toString(),
            limit,
            (options.toRevision ?? MAX_REVISION).toString(),
          ]),
    );
    return rows.map(toRecorded);
  }

  /** See {@link EventStore.readAll}. */
  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const after = (options.fromPosition ?? 0n).toString();
    const limit = options.maxCount ?? 4096;
    if (limit <= 0) return [];
    const prefix = options.streamPrefix;
    const rows = await this.guard(() =>
      prefix
        ? this.query<EventRow>(`SELECT ${COLUMNS} FROM es_events WHERE position > $1 AND starts_with(stream, $2) ORDER BY position LIMIT $3`, [
            after,
            prefix,
            limit,
          ])
        : this.query<EventRow>(`SELECT ${COLUMNS} FROM es_events WHERE position > $1 ORDER BY position LIMIT $2`, [after, limit]),
    );
    return rows.map(toRecorded);
  }

  /** See {@link EventStore.eventAt}: one read of `es_events` by its primary key. */
  async eventAt(position: bigint): Promise<RecordedEvent | null> {
    const rows = await this.guard(() => this.query<EventRow>(`SELECT ${COLUMNS} FROM es_events WHERE position = $1`, [position.toString()]));
    return rows.length === 0 ? null : toRecorded(rows[0]);
  }

  /** See {@link EventStore.streamRevision}. */
  async streamRevision(stream: string): Promise<bigint | null> {
    const rows = await this.guard(() => this.query<{ revision: string }>('SELECT revision FROM es_streams WHERE stream = $1 AND NOT deleted', [stream]));
    return rows.length === 0 ? null : BigInt(rows[0].revision);
  }

  /**
   * See {@link EventStore.streamIncarnation}: one statement (one snapshot) over the stream's
   * `es_streams` row (kept with `deleted` set after a deletion) and its first event.
   */
  async streamIncarnation(stream: string): Promise<bigint> {
    const rows = await this.guard(() =>
      this.query<{ incarnation: string }>(
        `SELECT (CASE WHEN s.deleted THEN s.revision + 1
                 ELSE coalesce((SELECT e.revision FROM es_events e WHERE e.stream = s.stream ORDER BY e.revision LIMIT 1), s.revision + 1) END)::text AS incarnation
         FROM es_streams s WHERE s.stream = $1`,
        [stream],
      ),
    );
    return rows.length === 0 ? 0n : BigInt(rows[0].incarnation);
  }

  /**
   * The highest position ever assigned (bigint; monotonic even after deletions), or 0n for an empty store (also a
   * database without the store's tables while their creation is held: {@link holdSchemaCreation}).
   */
  async headPosition(): Promise<bigint> {
    const rows = await this.guard(async () => ((await this.ensureSchema()) ? this.query<{ position: string }>('SELECT position FROM es_head') : []));
    return rows.length === 0 ? 0n : BigInt(rows[0].position);
  }

  /**
   * See {@link EventStore.readableHead}: the same committed `es_head` as {@link headPosition}.
   * `es_append_v2` moves `es_head` and inserts the events it numbers in one transaction, holding
   * the `es_head` row lock until its commit (postgres-schema.ts), and no other statement moves it
   * (a deletion leaves it): so when a read sees head H, every position up to H was committed (a
   * rolled-back append rolled its `es_head` update back with it, and H does not count it). Each
   * later statement, on any pooled connection (READ COMMITTED: a statement sees every transaction
   * committed before it started), sees those events, and {@link readAll} reads without a limit of
   * its own: nothing at or below H can appear after this read, or be hidden from a read after it.
   */
  readableHead(): Promise<bigint> {
    return this.headPosition();
  }

  /**
   * See {@link EventStore.subscribeToAll}. Appends of this process wake it at once; appends of
   * other processes are seen within `pollIntervalMs`. A failed page read ends the iteration with
   * EventStoreUnavailableError (the caller resubscribes from its checkpoint).
   */
  subscribeToAll(options: SubscribeOptions = {}): Subscription {
    if (this.closed) throw new EventStoreClosedError('PostgreSQL');
    return this.subscriptions.open(options);
  }

  /**
   * See {@link EventStore.deleteStream}: the stream's events are deleted in one transaction (hard
   * delete); positions and revisions are not reused (appending again continues after the last
   * deleted revision). The stream's revision row is marked deleted first, which locks it until the
   * commit: an append to the stream waits for the deletion (as for another append), and one that
   * starts the stream again can only write after it, so its events are never deleted with the old
   * ones. A stream without a live row does not exist: nothing is deleted. A deletion at an expected
   * revision whose answer was lost is run again until its outcome is known (see the class docs):
   * the run again resolves when the life of the stream up to that revision is gone (deleted by the
   * lost run, or by another deletion meanwhile), also when the stream was written again since.
   * @throws WriteOutcomeUnknownError when the server could not be reached again after a lost answer.
   */
  async deleteStream(stream: string, options: DeleteStreamOptions = {}): Promise<void> {
    const expected = options.expectedRevision;
    await this.guard(() =>
      withKnownOutcome(
        (rerun) =>
          this.transaction(async (client) => {
            if (rerun && expected !== undefined && (await lifeDeleted(client, stream, expected))) return;
            await deleteInTransaction(client, stream, expected);
          }),
        this.knownOutcome('deletion', stream),
      ),
    );
  }

  /**
   * See {@link EventStore.tryClaim}: a session-level advisory lock on a dedicated connection
   * outside the pool ({@link PostgresClaims}: released by `release()`, or by the server when that
   * connection ends). One round trip, bounded by the store's answer timeout.
   */
  tryClaim(name: string): Promise<HeldClaim | null> {
    return this.claims.tryClaim(name);
  }

  /**
   * See {@link EventStore.poolConnections}: the `pg` pool's `totalCount` and `idleCount` now, and the
   * operations waiting for a connection (the store's queue, {@link PoolCheckouts}, and the pool's own, empty but for a moment).
   */
  poolConnections(): PoolConnections {
    return { total: this.pool.totalCount, idle: this.pool.idleCount, waiting: this.checkouts.waiting + this.pool.waitingCount };
  }

  /**
   * See {@link EventStore.probeWrite}: one transaction, rolled back, taking the locks an append
   * takes: `es_head`'s row lock (`SELECT … FOR UPDATE`, which PostgreSQL refuses in a read-only
   * transaction, a standby or `default_transaction_read_only`: 25006) and `ROW EXCLUSIVE` on
   * `es_streams` and `es_events`. So it fails where an append would, also while another transaction
   * holds one of those locks (a maintenance transaction, `VACUUM FULL es_events`): after the
   * statement timeout, 57014 or 55P03. It waits in line with appends for `es_head` and holds it for
   * one round trip. Errors as a write's.
   */
  async probeWrite(): Promise<void> {
    await this.guard(async () => {
      await this.requireSchema();
      await this.onClient(async (client, discard) => {
        await client.query('BEGIN');
        try {
          await client.query('SELECT position FROM es_head FOR UPDATE');
          await client.query('LOCK TABLE es_streams, es_events IN ROW EXCLUSIVE MODE');
        } catch (error) {
          // an unanswered statement is still pending on the connection: a ROLLBACK would wait behind it (the connection is closed instead)
          if (!(lostAnswerOf(noAnswerOf(error, this.answerTimeoutMs)) instanceof AnswerLostError)) await client.query('ROLLBACK').catch(discard);
          throw error;
        }
        await client.query('ROLLBACK').catch(discard);
      }).catch((error: unknown) => {
        // nothing was written: a connection lost is the store unavailable, as the driver's error says
        throw error instanceof AnswerLostError ? error.cause : error;
      });
    });
  }

  /** See {@link EventStore.logCopy}: {@link PostgresLogCopy} on this store's pool (the schema set up first, errors as the store's). */
  logCopy(): LogCopy {
    return new PostgresLogCopy({
      query: (sql, params) => this.guard(() => this.query(sql, params)),
      transaction: (fn) => this.guard(() => this.transaction(fn)),
    });
  }

  /**
   * Closes the store: every operation waiting for a connection (all busy, or one being opened) fails
   * at once with {@link EventStoreClosedError}, as does every later one; statements running finish
   * (each bounded by {@link answerTimeoutMs}), and an operation that would send another one after
   * them fails so (a write whose answer was lost: WriteOutcomeUnknownError). Then ends the
   * subscriptions, the claims' connection ({@link PostgresClaims.close}) and the pool, and resolves
   * once every connection is closed. Idempotent.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.checkouts.close(new EventStoreClosedError('PostgreSQL'));
    await this.subscriptions.closeAll();
    await this.claims.close();
    await this.pool.end();
  }

  private async append(stream: string, events: SerializedEvent[], expected: ExpectedRevision, incarnation: bigint | undefined): Promise<AppendResult> {
    const expectedText = typeof expected === 'bigint' ? expected.toString() : expected;
    const known = lookedUpIds(events);
    const former = known.slice(events.length);
    const params = [stream, expectedText, events.map((e) => e.id), events.map((e) => e.type), events.map((e) => e.data), events.map((e) => e.metadata), former];
    const sql =
      incarnation === undefined
        ? 'SELECT out_outcome AS outcome, out_revision AS revision, out_position AS position FROM es_append_v2($1, $2, $3::uuid[], $4, $5, $6, $7::uuid[])'
        : 'SELECT out_outcome AS outcome, out_revision AS revision, out_position AS position, out_incarnation AS incarnation FROM es_append_in_life_v1($1, $2, $8, $3::uuid[], $4, $5, $6, $7::uuid[])';
    if (incarnation !== undefined) params.push(incarnation.toString());
    for (let attempt = 1; ; attempt++) {
      let row: AppendRow;
      try {
        [row] = await this.statement<AppendRow>(sql, params);
      } catch (error) {
        // A concurrent append inserted one of these ids (or this stream's first revision) first.
        if ((error as { code?: string }).code === UNIQUE_VIOLATION && attempt < MAX_APPEND_ATTEMPTS) continue;
        throw error;
      }
      if (row.outcome === 'ok') return { nextExpectedRevision: BigInt(row.revision!), position: BigInt(row.position!) };
      if (row.outcome === 'wrong_life')
        throw new WrongIncarnationError(stream, expected, row.revision === null ? 'no_stream' : BigInt(row.revision), incarnation!, BigInt(row.incarnation!));
      if (row.outcome === 'retry' && attempt < MAX_APPEND_ATTEMPTS) continue;
      const current = row.revision === null ? null : BigInt(row.revision);
      const stored = await this.storedRows(known);
      const existing = events.map((e) => storedRowOf(stream, e, (id) => stored.get(id)));
      if (existing.every((row) => row === undefined)) {
        if (row.outcome === 'ids_exist' && attempt < MAX_APPEND_ATTEMPTS) continue; // deleted meanwhile
        throw new WrongExpectedRevisionError(stream, expected, current ?? 'no_stream');
      }
      // The life's first revision, compared as a number: an ORDER BY naming an output column sorts
      // that column, so `revision::text AS revision ... ORDER BY revision` sorted text ("10" < "9").
      const [{ first }] = await this.query<{ first: string | null }>('SELECT min(revision)::text AS first FROM es_events WHERE stream = $1', [stream]);
      return resolveExistingIds(stream, events, expected, current, existing, first === null ? null : BigInt(first));
    }
  }

  private async storedRows(ids: string[]): Promise<Map<string, StoredEventRow>> {
    const rows = await this.query<EventRow>(`SELECT ${COLUMNS} FROM es_events WHERE id = ANY ($1::uuid[])`, [ids]);
    return new Map(
      rows.map((r) => [
        r.id,
        { position: BigInt(r.position), stream: r.stream, revision: BigInt(r.revision), type: r.type, data: r.data, metadata: r.metadata },
      ]),
    );
  }

  /** A read (or a statement whose lost answer needs no re-run): on the pool. */
  private async query<R>(sql: string, params: unknown[] = []): Promise<R[]> {
    await this.requireSchema();
    const client = await this.checkout();
    let broken = false;
    try {
      return (await client.query(sql, params)).rows as R[];
    } catch (error) {
      // not a server's answer (a lost connection, no answer within the bound): closed, never pooled again
      broken = !(error instanceof DatabaseError);
      throw noAnswerOf(error, this.answerTimeoutMs);
    } finally {
      client.release(broken);
    }
  }

  /**
   * A pooled connection (waiting at most `connectionTimeoutMs` for one) that ran the session
   * settings ({@link sessionSql}) as its first statement, within what is left of that time: a
   * connection whose first statement gets no answer by then is closed and {@link ConnectionNotReadyError}
   * thrown (nothing of the caller's was sent). (Its `error` event is listened to for its whole life:
   * the pool's `connect` handler in the constructor.)
   */
  private async checkout(): Promise<PoolClient> {
    const started = Date.now();
    const client = await this.checkouts.checkout();
    if (this.ready.has(client)) return client;
    const ignore = (): void => undefined;
    const withinMs = this.connectionTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    try {
      const settings = client.query(this.sessionSql);
      settings.catch(ignore);
      await Promise.race([
        settings,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new ConnectionNotReadyError(withinMs)), Math.max(0, withinMs - (Date.now() - started)));
        }),
      ]);
    } catch (error) {
      client.release(true);
      throw noAnswerOf(error, this.answerTimeoutMs);
    } finally {
      clearTimeout(timer);
    }
    this.ready.add(client);
    return client;
  }

  /**
   * One autocommit statement of a write, on a connection of its own. A connection that could not
   * be had rejects with the driver's error (nothing was sent); one that ends after the statement
   * was sent, with {@link AnswerLostError}.
   */
  private async statement<R>(sql: string, params: unknown[]): Promise<R[]> {
    await this.requireSchema();
    return this.onClient(async (client) => (await client.query(sql, params)).rows as R[]);
  }

  /** `fn` in one transaction (rolled back when it throws), lost answers as for {@link statement}. */
  private async transaction(fn: (client: PoolClient) => Promise<void>): Promise<void> {
    await this.requireSchema();
    await this.onClient(async (client, discard) => {
      await client.query('BEGIN');
      try {
        await fn(client);
        await client.query('COMMIT');
      } catch (error) {
        // a lost connection has nothing to roll back (the server does); a failed ROLLBACK leaves the connection unusable
        // (a statement unanswered within the bound is still pending on the connection: a ROLLBACK would wait behind it)
        if (!(lostAnswerOf(noAnswerOf(error, this.answerTimeoutMs)) instanceof AnswerLostError)) await client.query('ROLLBACK').catch(discard);
        throw error;
      }
    });
  }

  /**
   * `fn` on a pooled connection, which goes back to the pool after it, or is closed when it broke
   * (its answer lost) or `fn` called `discard`. A lost answer rejects with {@link AnswerLostError}, also
   * a statement unanswered within {@link answerTimeoutMs} (its cause a `PostgresNoAnswerError` (no-answer.ts)).
   * While `fn` runs, the connection's `error` event (emitted besides the statement's rejection when
   * the connection ends) is listened to, so that it cannot end the process.
   */
  private async onClient<T>(fn: (client: PoolClient, discard: () => void) => Promise<T>): Promise<T> {
    const client = await this.checkout();
    let broken = false;
    try {
      return await fn(client, () => (broken = true));
    } catch (error) {
      const lost = lostAnswerOf(noAnswerOf(error, this.answerTimeoutMs));
      if (lost instanceof AnswerLostError) broken = true;
      throw lost;
    } finally {
      client.release(broken);
    }
  }

  /** True when the store's tables already exist (read on a server that refused to create them). */
  private async schemaExists(): Promise<boolean> {
    // a connection of its own: `query` would wait for the schema this is deciding on
    const client = await this.checkout().catch(() => null);
    if (!client) return false;
    let broken = false;
    try {
      const result = await client.query<{ present: boolean }>(
        "SELECT to_regclass('es_events') IS NOT NULL AND to_regclass('es_streams') IS NOT NULL AND to_regclass('es_head') IS NOT NULL AS present",
      );
      return result.rows[0]?.present === true;
    } catch (error) {
      broken = !(error instanceof DatabaseError);
      return false;
    } finally {
      client.release(broken);
    }
  }

  /**
   * Creates the schema once per store (again after a failure, e.g. when the server was down), after
   * checking the database's recorded version: a newer one than this build's is refused
   * (EventStoreSchemaNewerError, also on a standby), a database whose encoding is not UTF8
   * (EventStoreDatabaseEncodingError), and one holding a table of the service's names that is not
   * the service's (EventStoreSchemaMismatchError, {@link schemaShapeMismatch}), and one holding a copy's mark
   * (EventStoreCopyInProgressError, unless {@link PostgresEventStoreOptions.acceptCopyInProgress}). `es_events.created`'s default is set to the server's clock at
   * the insert when it is not ({@link POSTGRES_CREATED_DEFAULT_SQL}). A setup that changed something reports one line
   * ({@link reportSchemaChanges}). A database whose `es_events` holds events past `es_head` (a collided restore) is refused
   * with EventStoreHeadBehindError (unless {@link PostgresEventStoreOptions.acceptCopyInProgress}). Every refusal rolls the
   * setup's transaction back: nothing created or changed. A database already set up for this version gets no DDL at all
   * (a role with only read and write on the tables serves it; newcomer ncpg73 F1). Resolves true once the schema is
   * there; false, creating nothing and remembering nothing, for a database without the tables while their creation is
   * held ({@link holdSchemaCreation}).
   */
  private ensureSchema(): Promise<boolean> {
    if (this.closed) return Promise.reject(new EventStoreClosedError('PostgreSQL'));
    this.schemaReady ??= (async () => {
      const client = await this.checkout();
      // a connection lost meanwhile rejects the statement (the setup fails, tried again on the next call); its `error` event must not end the process
      client.on('error', () => undefined);
      let change: string | null;
      let held = false;
      // The setup's statements may wait up to its own statement timeout: its answers get that + the margin on the client.
      const setupQuery = <R extends QueryResultRow>(text: string, values?: unknown[]) =>
        client.query<R>({ text, values, query_timeout: SCHEMA_SETUP_TIMEOUT_MS + ANSWER_MARGIN_MS } as QueryConfig);
      try {
        // The database's own encoding (not the connection's): text it cannot hold would fail every write of it.
        const encoding = (await setupQuery<{ encoding: string }>("SELECT current_setting('server_encoding') AS encoding")).rows[0].encoding;
        if (encoding !== 'UTF8') throw new EventStoreDatabaseEncodingError(encoding);
        await setupQuery('BEGIN');
        // its own bound, longer than a statement's (SET LOCAL: this transaction only)
        await setupQuery(`SET LOCAL statement_timeout = ${SCHEMA_SETUP_TIMEOUT_MS}; SET LOCAL lock_timeout = ${SCHEMA_SETUP_TIMEOUT_MS}`);
        await setupQuery('SELECT pg_advisory_xact_lock($1)', [POSTGRES_SCHEMA_LOCK_KEY]);
        const before = (await setupQuery<SchemaStateRow>(POSTGRES_SCHEMA_STATE_SQL)).rows[0];
        const recorded = before.has_version_table
          ? ((await setupQuery<{ version: number | null }>(POSTGRES_SCHEMA_VERSION_SQL)).rows[0]?.version ?? null)
          : null;
        if (recorded !== null && recorded > POSTGRES_SCHEMA_VERSION)
          throw new EventStoreSchemaNewerError(recorded, POSTGRES_SCHEMA_VERSION, 'the PostgreSQL database (DATABASE_URL)');
        // A copy into this database that was not finished and verified (copy-store's mark): its log may be partial.
        if (before.has_copy_marker && !this.acceptCopyInProgress) {
          const [row] = (await setupQuery<{ started: Date; source: string }>(`SELECT started, source FROM ${COPY_MARKER_TABLE} LIMIT 1`)).rows;
          throw new EventStoreCopyInProgressError(
            'the PostgreSQL database (DATABASE_URL)',
            row ? { started: row.started, source: row.source } : UNKNOWN_COPY_MARKER,
          );
        }
        // Tables of the same names that are not the service's (another application's es_events): refused before anything is created or changed.
        const mismatch = schemaShapeMismatch((await setupQuery<TableColumnRow>(POSTGRES_TABLE_COLUMNS_SQL, [Object.keys(POSTGRES_TABLE_COLUMNS)])).rows);
        if (mismatch) throw mismatch;
        // Events past the head: a pg_restore that collided with a schema created before it (its es_head row kept). Appends would reuse positions.
        if (before.has_tables && !this.acceptCopyInProgress) {
          const { last, head } = (await setupQuery<{ last: string | null; head: string | null }>(postgresHeadAndLastSql(before.has_head))).rows[0];
          if (last !== null && BigInt(last) > BigInt(head ?? '0')) throw new EventStoreHeadBehindError(BigInt(head ?? '0'), BigInt(last));
        }
        change = schemaChangeLine(before, recorded);
        if (!before.has_tables && this.schemaCreationHeld) {
          // A new database while the caller's checks run: nothing is created (see holdSchemaCreation).
          await setupQuery('ROLLBACK');
          held = true;
        } else {
          // A database set up for this version gets no DDL: CREATE OR REPLACE FUNCTION and COMMENT ON TABLE need its owner, and the role may only read and write its tables.
          if (change !== null) await setupQuery(POSTGRES_SCHEMA_SQL);
          // Only when it differs: ALTER TABLE takes es_events' exclusive lock, which would wait for (and stop) other replicas' reads and appends on every start.
          if (createdDefaultDiffers(before)) await setupQuery(POSTGRES_CREATED_DEFAULT_SQL);
          await setupQuery('COMMIT');
        }
        client.release();
      } catch (error) {
        client.release(true);
        // A standby (read-only) refuses the DDL even when the schema is there: reads can be served,
        // and writes answer store_unavailable (SQLSTATE 25006) until a primary takes them.
        if ((error as { code?: unknown }).code === READ_ONLY_SQL_TRANSACTION && (await this.schemaExists())) return true;
        throw noAnswerOf(error, SCHEMA_SETUP_TIMEOUT_MS + ANSWER_MARGIN_MS);
      }
      if (held) {
        this.schemaReady = null;
        return false;
      }
      if (change === null) return true;
      if (this.schemaChangeListener) this.schemaChangeListener(change);
      else this.pendingSchemaChanges.push(change);
      return true;
    })().catch((error: unknown) => {
      this.schemaReady = null;
      throw error;
    });
    return this.schemaReady;
  }

  /**
   * {@link ensureSchema}, rejecting with EventStoreUnavailableError when the database holds none of the store's tables and their
   * creation is held ({@link holdSchemaCreation}): only {@link headPosition} answers then.
   */
  private async requireSchema(): Promise<void> {
    if (!(await this.ensureSchema()))
      throw new EventStoreUnavailableError(
        "PostgreSQL event store: the database holds none of the service's tables, and their creation is held until the start's checks have passed",
      );
  }

  /** {@link withKnownOutcome}'s options for a `write` of `stream` on this store. */
  private knownOutcome(write: 'append' | 'deletion', stream: string) {
    return { write, stream, withinMs: this.connectionTimeoutMs, closed: () => this.closed };
  }

  private async guard<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      throw mapPostgresError(error, this.describeUnavailable);
    }
  }
}

function toRecorded(row: EventRow): RecordedEvent {
  return recordedFromRow({ ...row, revision: BigInt(row.revision), position: BigInt(row.position) }, row.created);
}

/**
 * Deletes `stream`'s events and marks its row deleted, in `client`'s transaction (see
 * {@link PostgresEventStore.deleteStream}).
 * @throws WrongExpectedRevisionError when `expected` is given and the stream is not at it (the caller rolls back).
 */
async function deleteInTransaction(client: PoolClient, stream: string, expected: bigint | undefined): Promise<void> {
  const { rows } = await client.query<{ revision: string }>(
    'UPDATE es_streams SET deleted = true WHERE stream = $1 AND NOT deleted RETURNING revision::text AS revision',
    [stream],
  );
  const current = rows.length > 0 ? BigInt(rows[0].revision) : null;
  // Thrown inside the transaction: rolled back, nothing deleted.
  if (expected !== undefined && current !== expected) throw new WrongExpectedRevisionError(stream, expected, current ?? 'no_stream');
  if (current !== null) await client.query('DELETE FROM es_events WHERE stream = $1', [stream]);
}

/**
 * True when the life of `stream` up to revision `expected` (bigint) is deleted: the stream got at
 * least that far (its row's revision, kept after a deletion, is at or past it) and holds no event
 * at or before it. What a deletion at `expected` leaves, also when the stream was written again after it.
 */
async function lifeDeleted(client: PoolClient, stream: string, expected: bigint): Promise<boolean> {
  const { rows } = await client.query<{ gone: boolean }>(
    'SELECT s.revision >= $2 AND NOT EXISTS (SELECT 1 FROM es_events e WHERE e.stream = s.stream AND e.revision <= $2) AS gone FROM es_streams s WHERE s.stream = $1',
    [stream, expected.toString()],
  );
  return rows[0]?.gone === true;
}
