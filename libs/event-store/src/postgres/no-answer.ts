/**
 * A statement of the PostgreSQL store sent on an open connection got no answer within the store's
 * client-side bound (`answerTimeoutMs` of postgres-settings.ts, the driver's `query_timeout`): the
 * server is frozen, overloaded past its own timeouts, or cut off (a hung host, a network partition
 * dropping packets), since a running server cancels a statement at its `statement_timeout` first.
 * The connection is closed (never returned to the pool with the statement pending); whether the
 * statement ran is unknown, so a write's answer counts as lost (`lostAnswerOf`). `withinMs` is the
 * bound (ms); `cause` the driver's error (`Query read timeout`).
 */
export class PostgresNoAnswerError extends Error {
  override readonly name = 'PostgresNoAnswerError';
  constructor(
    readonly withinMs: number,
    override readonly cause?: unknown,
  ) {
    super(
      `no answer from PostgreSQL to a statement within ${withinMs} ms (the server is frozen, overloaded or unreachable: a hung host, a network partition); the connection was closed`,
    );
  }
}

/** The `pg` driver's message for a statement whose `query_timeout` passed. */
const DRIVER_QUERY_TIMEOUT = 'Query read timeout';

/**
 * `error` as a {@link PostgresNoAnswerError} of the bound `withinMs` (ms) when it is the driver's
 * `query_timeout` error, else unchanged.
 */
export function noAnswerOf(error: unknown, withinMs: number): unknown {
  return error instanceof Error && !(error instanceof PostgresNoAnswerError) && error.message === DRIVER_QUERY_TIMEOUT
    ? new PostgresNoAnswerError(withinMs, error)
    : error;
}
