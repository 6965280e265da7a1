import {
  DuplicateEventIdError,
  EventStoreDatabaseEncodingError,
  EventStoreSchemaMismatchError,
  EventStoreSchemaNewerError,
  EventStoreCopyInProgressError,
  EventStoreUnavailableError,
  WrongExpectedRevisionError,
} from '../errors';
import { PostgresNoAnswerError } from './no-answer';

/**
 * SQLSTATE classes meaning "the store cannot serve this now": 08 connection exception,
 * 28 invalid authorization, 3D invalid catalog (database missing), 53 insufficient resources,
 * 57 operator intervention (shutdown, cannot connect now), 58 system error; and 25006
 * read_only_sql_transaction, a write sent to a standby (during a failover, before the new primary
 * is promoted, or through a read-only endpoint): retrying later, on the promoted primary, succeeds;
 * and 55P03 lock_not_available, a statement that waited `lock_timeout` for another transaction's
 * lock (rolled back: retrying once the lock is released succeeds).
 */
const UNAVAILABLE_SQLSTATE = /^(08|28|3D|53|57|58)|^25006$|^55P03$/;
/** Node socket errors and the pg driver's own connection failures (SSL asked for of a server without it among them: the connection is refused). */
const UNAVAILABLE_NODE_CODE = /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|ECONNABORTED)$/;
const UNAVAILABLE_MESSAGE =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection refused|not queryable|Cannot use a pool after calling end|does not support SSL connections|error establishing an SSL connection/i;

/**
 * The `pg` driver's error when the server asks for a SCRAM password and the client has none (no
 * password in the connection string, no `PGPASSWORD`, no `.pgpass` entry): thrown by the driver
 * itself, without a SQLSTATE (newcomer ncpg73 F2: it answered 500 `internal`).
 */
const NO_PASSWORD_MESSAGE = /client password must be a string/;

/**
 * True when `error` says the server asked for a password and the client sent none: the driver's
 * own SCRAM error ({@link NO_PASSWORD_MESSAGE}), or PostgreSQL's answer to an empty one under
 * `password` (cleartext) authentication (28P01 `empty password returned by client`). A login
 * refused as a wrong password is, with the fix "put the password in DATABASE_URL".
 */
export function isPostgresPasswordMissing(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (NO_PASSWORD_MESSAGE.test(error.message)) return true;
  return (error as { code?: unknown }).code === '28P01' && /empty password/i.test(error.message);
}

/** SQLSTATE 42501 insufficient_privilege: the role may not create in the schema, or read or write a table, or replace a function it does not own. */
export const INSUFFICIENT_PRIVILEGE = '42501';

/**
 * True when `error` is PostgreSQL's refusal of a privilege the connecting role lacks (SQLSTATE
 * 42501: `permission denied for schema public`, `… for table es_schema`, `must be owner of table
 * es_events`). Nothing was written (the statement was rolled back), and retrying does not help
 * until the role is granted what it needs ({@link POSTGRES_PRIVILEGES_NEEDED}).
 */
export function isPostgresPermissionDenied(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === INSUFFICIENT_PRIVILEGE;
}

/**
 * What the role the store connects as needs, with `role` (its name, or a placeholder) in the
 * statements that grant it: CREATE on the schema its tables go in for the first start and for a
 * start that upgrades the schema, and afterwards read and write on its tables (a start that
 * changes nothing runs no DDL). Newcomer ncpg73 F1.
 */
export function postgresPrivilegesNeeded(role: string): string {
  return `the role needs CREATE on the schema its tables go in (public, or the first schema of its search_path) at the first start and at a start that upgrades the schema (GRANT CREATE ON SCHEMA public TO ${role}, or make it the database's owner: ALTER DATABASE <database> OWNER TO ${role}; PostgreSQL 15 and later no longer grant CREATE on public to every role), and afterwards SELECT, INSERT, UPDATE and DELETE on es_events, es_streams, es_head and es_schema (tables another role created: ALTER TABLE <table> OWNER TO ${role} for each, or GRANT SELECT, INSERT, UPDATE, DELETE ON es_events, es_streams, es_head, es_schema TO ${role}, and run the start of a build that upgrades the schema as their owner)`;
}

/** SQLSTATE of a write refused by a read-only server (a standby). */
export const READ_ONLY_SQL_TRANSACTION = '25006';

/** SQLSTATE of a unique violation (a concurrent append inserted the same id or revision first). */
export const UNIQUE_VIOLATION = '23505';

/**
 * SQLSTATEs saying an object the statement names does not exist: 42P01 undefined_table, 42883
 * undefined_function, 3F000 invalid_schema_name. Met on the service's own objects (`es_…`) by a
 * running process, they mean its schema is gone: the database was dropped and created again, or
 * is being restored, under it.
 */
const MISSING_OBJECT_SQLSTATE = /^(42P01|42883|3F000)$/;
/** The service's own objects in a driver's message: `relation "es_streams"`, `function es_append_v2(…)`. */
const OWN_OBJECT = /\bes_[a-z_0-9]+/;

/**
 * True when `error` says the service's own tables or functions (`es_…`, see `postgres-schema.ts`)
 * do not exist ({@link MISSING_OBJECT_SQLSTATE}; an invalid schema name, 3F000, whatever it names):
 * the database under a running process was dropped and created again, or is being restored. The
 * process does not create the schema then (a replica creating it collides with a `pg_restore`):
 * the schema is set up at start.
 */
export function isPostgresSchemaMissing(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !MISSING_OBJECT_SQLSTATE.test(code)) return false;
  return code === '3F000' || (error instanceof Error && OWN_OBJECT.test(error.message));
}

/**
 * The message of the {@link EventStoreUnavailableError} of {@link isPostgresSchemaMissing}'s errors:
 * the cause, and what to do.
 */
export function postgresSchemaMissingMessage(error: unknown): string {
  return `PostgreSQL event store: the service's tables are missing (${(error as Error).message}, SQLSTATE ${(error as { code: string }).code}): the database was dropped and created again, or restored, under this running process; if a pg_restore is running, this ends when it has finished; otherwise restart the replica, which sets the schema up at start (a running one does not: it would collide with a pg_restore)`;
}

/** True when `error` says PostgreSQL cannot be reached or cannot serve requests now (a {@link PostgresNoAnswerError} too). */
export function isPostgresUnavailable(error: unknown): boolean {
  if (error instanceof PostgresNoAnswerError) return true;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && (UNAVAILABLE_SQLSTATE.test(code) || UNAVAILABLE_NODE_CODE.test(code))) return true;
  return error instanceof Error && (UNAVAILABLE_MESSAGE.test(error.message) || NO_PASSWORD_MESSAGE.test(error.message));
}

/** Errors of opening a connection ({@link connectFailure}): the driver's, before PostgreSQL's start-up handshake finished. */
const CONNECT_FAILURES = new WeakSet<object>();

/**
 * Marks `error` (returned as it is) as the failure of opening a connection: the pool's `connect()`
 * or a client's `connect()`, before the start-up handshake finished (a connection already open that
 * fails later is never marked). Read by {@link isClosedBeforePostgresAnswer}.
 */
export function connectFailure<E>(error: E): E {
  if (error !== null && typeof error === 'object') CONNECT_FAILURES.add(error);
  return error;
}

/**
 * True when `error` is a connection the server closed (the driver's `Connection terminated
 * unexpectedly`), reset (ECONNRESET) or answered with something else than PostgreSQL's answer to
 * the SSL request (`There was an error establishing an SSL connection`, with `sslmode`) while it
 * was being opened ({@link connectFailure}), before
 * any answer of PostgreSQL's (one refusing the login or shutting down answers with a SQLSTATE): the
 * address is not a PostgreSQL server (another service's port, a proxy or load balancer without a
 * backend). A connection PostgreSQL ends mid-session (an administrator's `pg_terminate_backend`, a
 * crash) is not one: its error is not a connect failure.
 */
export function isClosedBeforePostgresAnswer(error: unknown): boolean {
  if (error === null || typeof error !== 'object' || !CONNECT_FAILURES.has(error)) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  return (
    code === 'ECONNRESET' ||
    (code === undefined && (message === 'Connection terminated unexpectedly' || message === 'There was an error establishing an SSL connection'))
  );
}

/**
 * The default message of the {@link EventStoreUnavailableError} of a driver error: `PostgreSQL event store: <the driver's message>`;
 * a privilege refused ({@link isPostgresPermissionDenied}) with what the role needs ({@link postgresPrivilegesNeeded}), a password
 * asked for and none sent ({@link isPostgresPasswordMissing}) saying so.
 */
export function postgresUnavailableMessage(error: unknown): string {
  const message = (error as Error).message;
  if (isPostgresPermissionDenied(error))
    return `PostgreSQL event store: ${message} (SQLSTATE ${INSUFFICIENT_PRIVILEGE}): ${postgresPrivilegesNeeded('<role>')}`;
  if (isPostgresPasswordMissing(error))
    return `PostgreSQL event store: the server asks for a password and the connection string carries none (${message}): put the password in it (postgres://user:password@host:5432/database, percent-encoded)`;
  return `PostgreSQL event store: ${message}`;
}

/**
 * Maps a driver error to the port's errors: the port's own errors pass through, connection and
 * server-availability failures become {@link EventStoreUnavailableError} with the message
 * `describe` gives (default {@link postgresUnavailableMessage}), the service's own tables or
 * functions missing ({@link isPostgresSchemaMissing}) one with {@link postgresSchemaMissingMessage},
 * anything else (a bug) is returned unchanged.
 */
export function mapPostgresError(error: unknown, describe: (error: unknown) => string = postgresUnavailableMessage): unknown {
  if (
    error instanceof WrongExpectedRevisionError ||
    error instanceof DuplicateEventIdError ||
    error instanceof EventStoreUnavailableError ||
    error instanceof EventStoreSchemaNewerError ||
    error instanceof EventStoreCopyInProgressError ||
    error instanceof EventStoreSchemaMismatchError ||
    error instanceof EventStoreDatabaseEncodingError ||
    error instanceof TypeError
  ) {
    return error;
  }
  if (isPostgresUnavailable(error) || isPostgresPermissionDenied(error)) return new EventStoreUnavailableError(describe(error), error);
  if (isPostgresSchemaMissing(error)) return new EventStoreUnavailableError(postgresSchemaMissingMessage(error), error);
  return error;
}

/**
 * What a SQLSTATE says made the store unavailable, in a few words a client may be shown (no
 * server detail): e.g. `PostgreSQL has too many connections (SQLSTATE 53300)`; null for a code
 * without one of its own (the caller says "unavailable" only). Covers 53300 too many connections,
 * 57014 statement canceled (statement timeout), 55P03 lock not available (lock timeout), 25006
 * read-only, 53100 disk full, 57P01 the connection ended by the server (a shutdown, or `pg_terminate_backend`), 57P02 and 57P03
 * shutting down, starting up or in recovery, 3D000 the database missing, 42501 a privilege denied to the role (what to grant),
 * 28P01 and 28000 the login refused, 42P01, 42883 and 3F000 the service's tables missing (only mapped to unavailable when {@link isPostgresSchemaMissing}).
 */
export function postgresCauseOf(sqlstate: string): string | null {
  const what = POSTGRES_CAUSES[sqlstate];
  return what === undefined ? null : `${what} (SQLSTATE ${sqlstate})`;
}

/**
 * What a failed connection to PostgreSQL says made the store unavailable, in a few words a client may be shown (no
 * address: `/health` names it): the system's code of the socket error (`ECONNREFUSED` no server listening, `ECONNRESET`
 * or `EPIPE` the connection cut, `ETIMEDOUT`/`EHOSTUNREACH`/`ENETUNREACH` the address unreachable, `ENOTFOUND`/`EAI_AGAIN`
 * its host name not resolved) or node-postgres' `Connection terminated unexpectedly` (the server or the network closed
 * it), e.g. `PostgreSQL refused the connection: no server listens at the address DATABASE_URL names (ECONNREFUSED)`;
 * null for another error. Newcomer ncpg67 F2: these answered only "the event store is unavailable; retry later" while
 * `/health` already said why. A password asked for and none sent ({@link isPostgresPasswordMissing}) says so (newcomer ncpg73 F2).
 */
export function postgresConnectionCauseOf(error: unknown): string | null {
  if (isPostgresPasswordMissing(error))
    return 'PostgreSQL asks for a password and DATABASE_URL carries none (nor is PGPASSWORD set): put the password in DATABASE_URL';
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && POSTGRES_CONNECTION_CAUSES[code] !== undefined) return `${POSTGRES_CONNECTION_CAUSES[code]} (${code})`;
  if (error instanceof Error && /^Connection terminated( unexpectedly)?$/.test(error.message))
    return 'the connection to PostgreSQL was closed while in use (the server stopped or restarted, or the network cut it)';
  return null;
}

/** {@link postgresConnectionCauseOf}'s table: socket error codes. */
const POSTGRES_CONNECTION_CAUSES: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'PostgreSQL refused the connection: no server listens at the address DATABASE_URL names',
  ECONNRESET: 'the connection to PostgreSQL was cut (the server stopped or restarted, or the network cut it)',
  EPIPE: 'the connection to PostgreSQL was cut (the server stopped or restarted, or the network cut it)',
  ETIMEDOUT: "PostgreSQL's address did not answer (the host is down or unreachable)",
  EHOSTUNREACH: "PostgreSQL's host is unreachable",
  ENETUNREACH: "PostgreSQL's network is unreachable",
  ENOTFOUND: "DATABASE_URL's host name could not be resolved",
  EAI_AGAIN: "DATABASE_URL's host name could not be resolved now (DNS)",
};

/** {@link postgresCauseOf}'s table. */
const POSTGRES_CAUSES: Readonly<Record<string, string>> = {
  '53300': 'PostgreSQL has too many connections',
  '57014': 'a PostgreSQL statement was canceled by its statement timeout (e.g. waiting for a lock)',
  '55P03': 'a PostgreSQL lock was not available within the lock timeout',
  '25006': 'PostgreSQL is read-only (a standby or a read-only database)',
  '53100': "PostgreSQL's disk is full",
  // admin_shutdown: the server stopping (fast or immediate) and pg_terminate_backend alike (newcomer ncpg73 F4).
  '57P01': 'the server ended the connection (shut down, or an administrator terminated it)',
  '57P02': 'PostgreSQL is shutting down',
  '42501':
    "PostgreSQL denied DATABASE_URL's role a privilege on the event store's schema or tables: grant it CREATE on the schema (first start, upgrades) and SELECT, INSERT, UPDATE and DELETE on es_events, es_streams, es_head and es_schema, or make it their owner (GET /health names the object; docs/stores.md lists the privileges)",
  // One code for a server starting up, shutting down (new connections during a fast or smart stop) or in recovery (newcomer ncpg67 F2).
  '57P03': 'PostgreSQL cannot accept connections now (starting up, shutting down or in recovery)',
  '42P01':
    "the event store's tables are missing from its PostgreSQL database (dropped and created again, or being restored, under this replica: it works again once the restore has finished, or once the replica is restarted)",
  '42883':
    "the event store's functions are missing from its PostgreSQL database (dropped and created again, or being restored, under this replica: it works again once the restore has finished, or once the replica is restarted)",
  '3D000': "the event store's PostgreSQL database does not exist (dropped, or DATABASE_URL names another: GET /health names it)",
  '28P01': 'PostgreSQL refused the password of DATABASE_URL (changed or revoked since the service started?)',
  '28000': "PostgreSQL refused the connection for DATABASE_URL's user or this host (its pg_hba.conf rules or the role's rights)",
  '3F000':
    "the event store's schema is missing from its PostgreSQL database (dropped and created again, or being restored, under this replica: it works again once the restore has finished, or once the replica is restarted)",
};
