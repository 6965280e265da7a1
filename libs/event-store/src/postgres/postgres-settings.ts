/**
 * The PostgreSQL adapter's connection settings and their defaults, without the `pg` driver (the
 * service's configuration reads the defaults on every store).
 */

/** Default of `PostgresEventStoreOptions.maxConnections` (`DATABASE_POOL_SIZE`): connections per process. */
export const DEFAULT_POOL_SIZE = 16;
/** Default of `PostgresEventStoreOptions.statementTimeoutMs` (`DATABASE_STATEMENT_TIMEOUT_MS`), ms. */
export const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;
/**
 * `statement_timeout` and `lock_timeout` (ms) of the schema setup's transaction (`SET LOCAL`): it may
 * wait for other replicas' setups (an advisory lock) and, on a database set up before 2026-12-03,
 * for `es_events`' exclusive lock, longer than one statement of the service may.
 */
export const SCHEMA_SETUP_TIMEOUT_MS = 60_000;

/**
 * The statement each pooled connection runs first: `statement_timeout` and `lock_timeout` of
 * `timeoutMs` (ms), or, for 0, only `SELECT 1` (the role's or database's settings stay): either
 * way the statement that shows the connection can serve.
 * @throws RangeError when `timeoutMs` is not an integer of 0 or more.
 */
export function sessionSettingsSql(timeoutMs: number): string {
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 0) throw new RangeError(`statement timeout ${timeoutMs}: use an integer of milliseconds, 0 or more`);
  return timeoutMs === 0 ? 'SELECT 1' : `SET statement_timeout = ${timeoutMs}; SET lock_timeout = ${timeoutMs}`;
}

/**
 * What the client-side bound on an answer (see {@link answerTimeoutMs}) adds to the statement
 * timeout (ms): the server's own cancel (57014, 55P03) comes first when the server runs; this one
 * only ends the wait on a server that does not answer at all.
 */
export const ANSWER_MARGIN_MS = 5000;

/**
 * The statement time (ms) the client-side bound assumes when `statementTimeoutMs` is 0 (the role's
 * or database's `statement_timeout` applies, unknown to the service): the schema setup's own
 * {@link SCHEMA_SETUP_TIMEOUT_MS}, so the bound is 65 s then; keep the role's timeouts below it.
 */
export const UNSET_STATEMENT_TIMEOUT_ASSUMED_MS = SCHEMA_SETUP_TIMEOUT_MS;

/**
 * The longest time (ms) the store waits for PostgreSQL's answer to one statement it sent, on the
 * client (the driver's `query_timeout`): `statementTimeoutMs` + {@link ANSWER_MARGIN_MS}, or, for a
 * `statementTimeoutMs` of 0, {@link UNSET_STATEMENT_TIMEOUT_ASSUMED_MS} + the margin (65 000).
 * `statement_timeout` and `lock_timeout` are applied by the server, so a server that does not answer
 * at all (frozen: SIGSTOP, a hung host, a network partition dropping packets) never applies them;
 * this bound ends that wait: the connection is closed and the statement's answer taken as lost.
 * @throws RangeError when `statementTimeoutMs` is not an integer of 0 or more.
 */
export function answerTimeoutMs(statementTimeoutMs: number): number {
  if (!Number.isSafeInteger(statementTimeoutMs) || statementTimeoutMs < 0)
    throw new RangeError(`statement timeout ${statementTimeoutMs}: use an integer of milliseconds, 0 or more`);
  return (statementTimeoutMs === 0 ? UNSET_STATEMENT_TIMEOUT_ASSUMED_MS : statementTimeoutMs) + ANSWER_MARGIN_MS;
}
