/**
 * Whether writes to the event store work, as the writes themselves find out: a store can answer
 * reads (its head: `/health`'s `store.error` null, `event_store_up` 1) while refusing writes, e.g. a
 * SQLite file another process holds locked (`SQLITE_BUSY` after the busy timeout) or a PostgreSQL
 * server in read-only recovery. Every command of the service (append, compaction, policy, erasure,
 * over HTTP or NATS) reaches the store through {@link StoreWriteHealth.observing}: a command whose
 * store call fails with {@link EventStoreUnavailableError} (answered 503 `store_unavailable`) is a
 * failed write, whether the call was the append itself or a read the command made first to load,
 * check or decide (e.g. a PostgreSQL read of `es_events` canceled by its statement timeout while
 * `VACUUM FULL es_events` holds the table). It is recorded as `/health`'s `store.lastWriteError`
 * until a write succeeds, counted in `event_store_write_failures_total{code}`, and logged at warn once when
 * writes start failing and once when they succeed again ({@link OutageTransitions}, as `/health`
 * logs the store's outages), not for each failure between.
 *
 * A service that gets no write would stay degraded after the store became writable again: so
 * while the last write failed, and only then, the store is probed every
 * {@link WRITE_PROBE_INTERVAL_MS} (`EventStore.probeWrite`: a write transaction that changes nothing, e.g.
 * the file's `user_version` rewritten and committed on SQLite), and the first probe that finds it writable clears it all
 * as a write would (the same one line). A healthy store is never probed; a store without
 * `probeWrite` (KurrentDB) is cleared by a write only.
 */
import { Logger, type OnModuleDestroy } from '@nestjs/common';
import {
  DuplicateEventIdError,
  EventStoreCorruptError,
  EventStoreUnavailableError,
  WriteOutcomeUnknownError,
  WrongExpectedRevisionError,
  storeWith,
  type EventStore,
} from '@lib/event-store';
import { inThisContext, type InContext } from '@lib/session';
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

/** How often (ms) the store is probed while its last write failed (see the module doc). */
export const WRITE_PROBE_INTERVAL_MS = 5_000;

/**
 * See the module doc. `countFailure` is called with {@link writeFailureCode} of each failed write
 * (the metric); `probeIntervalMs` is the probes' interval (ms) while writes fail.
 */
export class StoreWriteHealth implements OnModuleDestroy {
  private readonly logger = new Logger('EventStore');
  private readonly outages = new OutageTransitions();
  private last: LastWriteError | null = null;
  /** The observed store's probe, when it has one (set by {@link observing}). */
  private probeWrite: (() => Promise<void>) | null = null;
  private probeTimer: NodeJS.Timeout | null = null;
  private probing = false;
  /** Failed writes so far: a probe that started before a write failed does not clear that failure. */
  private failures = 0;
  /**
   * Runs the probes' timer set-up outside every request (in the context this was made in, at
   * start-up): the timer is started by a failed write's request, and its "succeed again" line named
   * that request, answered long before (newcomer ncdiskfull F3).
   */
  private readonly outsideRequests: InContext = inThisContext();

  constructor(
    private readonly countFailure: (code: string) => void = () => undefined,
    private readonly probeIntervalMs: number = WRITE_PROBE_INTERVAL_MS,
  ) {}

  /** The last failed write, while no write succeeded since (null when the last write succeeded, or before any failed). */
  lastWriteError(): LastWriteError | null {
    return this.last;
  }

  /**
   * `store` as the commands use it: every call is observed (the reads a command makes to load,
   * check and decide as well as its writes; `close` and `subscribeToAll` are `store`'s own). A call
   * that fails with {@link EventStoreUnavailableError} is a failed write; a write that succeeds, or
   * is refused for its content ({@link WrongExpectedRevisionError}, {@link DuplicateEventIdError}:
   * the store took the write and decided), a successful one. A read that succeeds clears nothing (a
   * store may answer reads while refusing writes), and any other error leaves the state as it was.
   * Errors are rethrown unchanged. Give it only the store of the commands: a query's failed read is
   * not a failed write.
   */
  observing(store: EventStore): EventStore {
    this.probeWrite = store.probeWrite ? () => store.probeWrite!() : null;
    const observed = <T>(call: Promise<T>, kind: 'read' | 'write'): Promise<T> =>
      call.then(
        (result) => {
          if (kind === 'write') this.succeeded();
          return result;
        },
        (error: unknown) => {
          if (error instanceof EventStoreUnavailableError) this.failed(error);
          else if (kind === 'write' && (error instanceof WrongExpectedRevisionError || error instanceof DuplicateEventIdError)) this.succeeded();
          throw error;
        },
      );
    return storeWith(store, {
      appendToStream: (...args) => observed(store.appendToStream(...args), 'write'),
      deleteStream: (...args) => observed(store.deleteStream(...args), 'write'),
      readStream: (...args) => observed(store.readStream(...args), 'read'),
      readAll: (...args) => observed(store.readAll(...args), 'read'),
      eventAt: (...args) => observed(store.eventAt(...args), 'read'),
      streamRevision: (...args) => observed(store.streamRevision(...args), 'read'),
      streamIncarnation: (...args) => observed(store.streamIncarnation(...args), 'read'),
      headPosition: (...args) => observed(store.headPosition(...args), 'read'),
      readableHead: (...args) => observed(store.readableHead(...args), 'read'),
    });
  }

  /** Stops the probes (the service stops). */
  onModuleDestroy(): void {
    this.stopProbing();
  }

  private failed(error: EventStoreUnavailableError): void {
    const code = writeFailureCode(error);
    const now = Date.now();
    this.failures++;
    this.last = { message: error.message, code, at: new Date(now).toISOString() };
    this.countFailure(code);
    const probed = this.probeWrite ? ` or a write probe (every ${this.probeIntervalMs / 1000} s) finds the store writable` : '';
    const failing = `writes to the event store fail (${code}: ${truncatedForLog(error.message, MAX_LOGGED_STORE_ERROR_LENGTH)})`;
    if (this.outages.observe(error.message, now))
      this.logger.warn(
        // A damaged or replaced store file refuses every operation until the restart (ncrecheck70 F6: the line said store_unavailable and degraded).
        error instanceof EventStoreCorruptError
          ? `${failing}; every write answers 503 store_corrupt and /health says unavailable (store.error) until the service is restarted; the next failures are not logged one by one`
          : `${failing}; they answer 503 store_unavailable and /health says degraded (store.lastWriteError; unavailable while the store does not answer reads either) until a write succeeds${probed}; the next failures are not logged one by one`,
      );
    this.startProbing();
  }

  /** `by`: a write that succeeded, or a probe that found the store writable (no write came since the failure). */
  private succeeded(by: 'write' | 'probe' = 'write'): void {
    this.last = null;
    this.stopProbing();
    const change = this.outages.observe(null, Date.now());
    if (change?.kind === 'ended')
      this.logger.warn(
        `writes to the event store succeed again (${change.failures} failed write${change.failures === 1 ? '' : 's'} over ${change.seconds.toFixed(1)} s, from the first failure to ${by === 'write' ? 'this write' : 'a write probe that found the store writable'})`,
      );
  }

  /** Probes the store every `probeIntervalMs` until a probe or a write succeeds (a timer that does not keep the process alive). */
  private startProbing(): void {
    if (this.probeTimer || !this.probeWrite) return;
    this.probeTimer = this.outsideRequests(() => setInterval(() => void this.probe(), this.probeIntervalMs));
    this.probeTimer.unref();
  }

  private stopProbing(): void {
    if (this.probeTimer) clearInterval(this.probeTimer);
    this.probeTimer = null;
  }

  /** One probe (none while the last one runs): clears the failure when the store takes writes again and no write failed meanwhile. */
  private async probe(): Promise<void> {
    if (this.probing || !this.probeWrite || this.last === null) return;
    this.probing = true;
    const failuresBefore = this.failures;
    try {
      await this.probeWrite();
      if (this.last !== null && this.failures === failuresBefore) this.succeeded('probe');
    } catch {
      // Still not writable (or the store closed): the next probe tells.
    } finally {
      this.probing = false;
    }
  }
}
