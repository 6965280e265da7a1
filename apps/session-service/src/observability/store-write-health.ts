/**
 * Whether writes to the event store work, as the writes themselves find out: a store can answer
 * reads (its head: `/health`'s `store.error` null, `event_store_up` 1) while refusing writes, e.g. a
 * SQLite file another process holds locked (`SQLITE_BUSY` after the busy timeout) or a PostgreSQL
 * server in read-only recovery. Every append and stream deletion of the service goes through
 * {@link StoreWriteHealth.observing}; a write that fails with {@link EventStoreUnavailableError}
 * (answered 503 `store_unavailable`) is recorded as `/health`'s `store.lastWriteError` until a write
 * succeeds, counted in `event_store_write_failures_total{code}`, and logged at warn once when
 * writes start failing and once when they succeed again ({@link OutageTransitions}, as `/health`
 * logs the store's outages), not for each failure between.
 */
import { Logger } from '@nestjs/common';
import {
  DuplicateEventIdError,
  EventStoreUnavailableError,
  WriteOutcomeUnknownError,
  WrongExpectedRevisionError,
  storeWith,
  type EventStore,
} from '@lib/event-store';
import { OutageTransitions } from './outage-transitions';
import { truncatedForLog } from './request-log';
import { MAX_LOGGED_STORE_ERROR_LENGTH } from './health-transitions';

/** The last failed write, for `/health` (`store.lastWriteError`). */
export interface LastWriteError {
  /** The store's error message (as the 503 answer's cause; no event content). */
  message: string;
  /** The cause's code (e.g. `SQLITE_BUSY`, `ECONNREFUSED`, a PostgreSQL SQLSTATE), see {@link writeFailureCode}. */
  code: string;
  /** When it failed (ISO-8601). */
  at: string;
}

/**
 * The `code` label of a failed write (`error`, an {@link EventStoreUnavailableError}): the code of
 * its cause (the driver's: `SQLITE_BUSY`, `ECONNREFUSED`, `57P01`) when it is one (letters, digits
 * and `_`, at most 32), `outcome_unknown` for a {@link WriteOutcomeUnknownError} without one, else
 * `unavailable`. A bounded set: never message text.
 */
export function writeFailureCode(error: EventStoreUnavailableError): string {
  const code = (error.cause as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && /^[A-Za-z0-9_]{1,32}$/.test(code)) return code;
  return error instanceof WriteOutcomeUnknownError ? 'outcome_unknown' : 'unavailable';
}

/** See the module doc. `countFailure` is called with {@link writeFailureCode} of each failed write (the metric). */
export class StoreWriteHealth {
  private readonly logger = new Logger('EventStore');
  private readonly outages = new OutageTransitions();
  private last: LastWriteError | null = null;

  constructor(private readonly countFailure: (code: string) => void = () => undefined) {}

  /** The last failed write, while no write succeeded since (null when the last write succeeded, or before any failed). */
  lastWriteError(): LastWriteError | null {
    return this.last;
  }

  /**
   * `store`, whose `appendToStream` and `deleteStream` are observed (every other method is
   * `store`'s own): an {@link EventStoreUnavailableError} is a failed write; an answer, also a
   * refusal of the write's content ({@link WrongExpectedRevisionError}, {@link DuplicateEventIdError}:
   * the store took the write and decided), a successful one. Any other error leaves the state as it was. Errors are rethrown unchanged.
   */
  observing(store: EventStore): EventStore {
    const observed = <T>(write: Promise<T>): Promise<T> =>
      write.then(
        (result) => {
          this.succeeded();
          return result;
        },
        (error: unknown) => {
          if (error instanceof EventStoreUnavailableError) this.failed(error);
          else if (error instanceof WrongExpectedRevisionError || error instanceof DuplicateEventIdError) this.succeeded();
          throw error;
        },
      );
    return storeWith(store, {
      appendToStream: (...args) => observed(store.appendToStream(...args)),
      deleteStream: (...args) => observed(store.deleteStream(...args)),
    });
  }

  private failed(error: EventStoreUnavailableError): void {
    const code = writeFailureCode(error);
    const now = Date.now();
    this.last = { message: error.message, code, at: new Date(now).toISOString() };
    this.countFailure(code);
    if (this.outages.observe(error.message, now))
      this.logger.warn(
        `writes to the event store fail (${code}: ${truncatedForLog(error.message, MAX_LOGGED_STORE_ERROR_LENGTH)}); they answer 503 store_unavailable and /health says degraded (store.lastWriteError) until a write succeeds; the next failures are not logged one by one`,
      );
  }

  private succeeded(): void {
    this.last = null;
    const change = this.outages.observe(null, Date.now());
    if (change?.kind === 'ended')
      this.logger.warn(
        `writes to the event store succeed again (${change.failures} failed write${change.failures === 1 ? '' : 's'} over ${change.seconds.toFixed(1)} s, from the first failure to this write)`,
      );
  }
}
