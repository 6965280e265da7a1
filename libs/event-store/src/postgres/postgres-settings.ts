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
