import {
  DuplicateEventIdError,
  EventStoreDatabaseEncodingError,
  EventStoreSchemaNewerError,
  EventStoreUnavailableError,
  WrongExpectedRevisionError,
} from '../errors';

/**
 * SQLSTATE classes meaning "the store cannot serve this now": 08 connection exception,
 * 28 invalid authorization, 3D invalid catalog (database missing), 53 insufficient resources,
 * 57 operator intervention (shutdown, cannot connect now), 58 system error; and 25006
 * read_only_sql_transaction, a write sent to a standby (during a failover, before the new primary
 * is promoted, or through a read-only endpoint): retrying later, on the promoted primary, succeeds.
 */
const UNAVAILABLE_SQLSTATE = /^(08|28|3D|53|57|58)|^25006$/;
/** Node socket errors and the pg driver's own connection failures. */
const UNAVAILABLE_NODE_CODE = /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|ECONNABORTED)$/;
const UNAVAILABLE_MESSAGE =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection refused|not queryable|Cannot use a pool after calling end/i;

/** SQLSTATE of a write refused by a read-only server (a standby). */
export const READ_ONLY_SQL_TRANSACTION = '25006';

/** SQLSTATE of a unique violation (a concurrent append inserted the same id or revision first). */
export const UNIQUE_VIOLATION = '23505';

/** True when `error` says PostgreSQL cannot be reached or cannot serve requests now. */
export function isPostgresUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && (UNAVAILABLE_SQLSTATE.test(code) || UNAVAILABLE_NODE_CODE.test(code))) return true;
  return error instanceof Error && UNAVAILABLE_MESSAGE.test(error.message);
}

/** The default message of the {@link EventStoreUnavailableError} of a driver error: `PostgreSQL event store: <the driver's message>`. */
export function postgresUnavailableMessage(error: unknown): string {
  return `PostgreSQL event store: ${(error as Error).message}`;
}

/**
 * Maps a driver error to the port's errors: the port's own errors pass through, connection and
 * server-availability failures become {@link EventStoreUnavailableError} with the message
 * `describe` gives (default {@link postgresUnavailableMessage}), anything else (a bug) is returned unchanged.
 */
export function mapPostgresError(error: unknown, describe: (error: unknown) => string = postgresUnavailableMessage): unknown {
  if (
    error instanceof WrongExpectedRevisionError ||
    error instanceof DuplicateEventIdError ||
    error instanceof EventStoreUnavailableError ||
    error instanceof EventStoreSchemaNewerError ||
    error instanceof EventStoreDatabaseEncodingError ||
    error instanceof TypeError
  ) {
    return error;
  }
  if (isPostgresUnavailable(error)) return new EventStoreUnavailableError(describe(error), error);
  return error;
}
