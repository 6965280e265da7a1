import { DatabaseError } from 'pg';
import { EventStoreUnavailableError, WriteOutcomeUnknownError } from '../errors';
import { isPostgresUnavailable } from './postgres-errors';

/**
 * A statement was sent on an open connection and the connection ended (reset, closed, timed out)
 * before the server's answer arrived: the server may have run it to the end, its transaction
 * committed, or not at all. `cause` is the driver's error. (An error the server answered, a
 * `DatabaseError` with a SQLSTATE, is never one: the server ended the statement and rolled its
 * transaction back.)
 */
export class AnswerLostError extends Error {
  override readonly name = 'AnswerLostError';
  constructor(override readonly cause: unknown) {
    super(`the connection was lost before the server's answer: ${(cause as Error)?.message ?? String(cause)}`);
  }
}

/**
 * `error`, thrown by a statement on a connection the pool had handed out, as an
 * {@link AnswerLostError} when the connection ended without the server's answer (a driver or
 * socket error, e.g. `Connection terminated unexpectedly`, ECONNRESET), else unchanged.
 */
export function lostAnswerOf(error: unknown): unknown {
  if (error instanceof DatabaseError || error instanceof AnswerLostError) return error;
  return isPostgresUnavailable(error) ? new AnswerLostError(error) : error;
}

/** The first wait (ms) before running a write again after its answer was lost; doubled each time up to {@link MAX_RERUN_DELAY_MS}. */
export const FIRST_RERUN_DELAY_MS = 20;
/** The longest wait (ms) between two runs of a write whose answer was lost. */
export const MAX_RERUN_DELAY_MS = 1000;

/** Options of {@link withKnownOutcome}. */
export interface KnownOutcomeOptions {
  /** Which write and stream, for {@link WriteOutcomeUnknownError}. */
  write: 'append' | 'deletion';
  stream: string;
  /** How long (ms) after the loss new runs may start: the store's connect timeout. */
  withinMs: number;
  /** True once the store is closed: no further run starts. */
  closed(): boolean;
}

/**
 * Runs a write that is safe to run again (an append recognised by its event ids, a deletion at an
 * expected revision) and makes sure its outcome is known before answering: when a run's answer is
 * lost ({@link AnswerLostError}), the write is run again on another connection (`run(true)`: a
 * re-run, whose check answers the original result when the lost run committed, and writes now when
 * it did not), after 20 ms, then waits doubling up to 1 s, as long as a run can start within
 * `withinMs` of the loss (a run started then may itself wait up to the pool's connect timeout for a
 * connection). A re-run failing because the server cannot be reached or cannot serve now is tried
 * again the same way; any other answer (the result, WrongExpectedRevisionError, …) is the write's.
 * @throws WriteOutcomeUnknownError when no re-run got an answer within that time (or the store closed).
 */
export async function withKnownOutcome<T>(run: (rerun: boolean) => Promise<T>, options: KnownOutcomeOptions): Promise<T> {
  let lost: AnswerLostError;
  try {
    return await run(false);
  } catch (error) {
    if (!(error instanceof AnswerLostError)) throw error;
    lost = error;
  }
  const deadline = Date.now() + options.withinMs;
  for (let delay = FIRST_RERUN_DELAY_MS; !options.closed() && Date.now() + delay <= deadline; delay = Math.min(delay * 2, MAX_RERUN_DELAY_MS)) {
    await new Promise((resolve) => setTimeout(resolve, delay));
    try {
      return await run(true);
    } catch (error) {
      // not reached (or closed meanwhile: the loop ends): the outcome is still unknown
      if (!(error instanceof AnswerLostError) && !(error instanceof EventStoreUnavailableError) && !isPostgresUnavailable(error)) throw error;
    }
  }
  throw new WriteOutcomeUnknownError('PostgreSQL event store', options.write, options.stream, options.withinMs, lost.cause);
}
