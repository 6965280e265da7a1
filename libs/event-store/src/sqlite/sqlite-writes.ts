import type { SerializedEvent } from '../append-input';
import { DuplicateEventIdError, EventStoreUnavailableError, WrongExpectedRevisionError, WrongIncarnationError } from '../errors';
import type { AppendResult, ExpectedRevision } from '../event-store.port';
import type { SqliteAppender } from './sqlite-append';
import type { OperationOutcome, SqliteGroupCommit } from './sqlite-group-commit';
import type { SqliteWalPurge } from './sqlite-wal-purge';

/** One write operation of the SQLite store, as plain data (it crosses to the writer thread). `incarnation`: `AppendOptions.incarnation`. */
export type SqliteWrite =
  | { kind: 'append'; stream: string; events: SerializedEvent[]; expected: ExpectedRevision; incarnation?: bigint }
  | { kind: 'delete'; stream: string; expected?: bigint };

/** What a write gives: an append its {@link AppendResult}, a deletion the number of events removed. */
export type SqliteWriteResult = AppendResult | number;

/** Runs one write on `appender`'s connection (inside the caller's transaction and savepoint). Throws what {@link SqliteAppender} throws. */
export function runSqliteWrite(appender: SqliteAppender, write: SqliteWrite): SqliteWriteResult {
  return write.kind === 'append'
    ? appender.append(write.stream, write.events, write.expected, write.incarnation)
    : appender.delete(write.stream, write.expected);
}

/**
 * Commits `writes` as one group commit on `appender`'s connection (the store's own, or its writer
 * thread's), then purges the WAL when one of them deleted events (erasure; see
 * {@link SqliteWalPurge.purgeAfterTransaction}). Returns each write's
 * outcome, in order.
 * @throws what {@link SqliteGroupCommit.run} throws when the transaction itself fails (nothing written).
 */
export function commitSqliteWrites(
  group: SqliteGroupCommit,
  appender: SqliteAppender,
  walPurge: SqliteWalPurge,
  writes: readonly SqliteWrite[],
): OperationOutcome[] {
  const outcomes = group.run(
    writes.map((write) => () => {
      const result = runSqliteWrite(appender, write);
      if (write.kind === 'delete' && (result as number) > 0) walPurge.pending = true;
      return result;
    }),
  );
  walPurge.purgeAfterTransaction();
  return outcomes;
}

/** An error as plain data, to cross a thread boundary ({@link errorFromTransfer} rebuilds it). */
export type TransferredError =
  | { name: 'WrongExpectedRevisionError'; stream: string; expected: ExpectedRevision; actual: bigint | 'no_stream' }
  | {
      name: 'WrongIncarnationError';
      stream: string;
      expected: ExpectedRevision;
      actual: bigint | 'no_stream';
      expectedIncarnation: bigint;
      actualIncarnation: bigint;
    }
  | { name: 'DuplicateEventIdError'; stream: string; eventId: string }
  | { name: 'EventStoreUnavailableError'; message: string }
  | { name: 'Error'; message: string; code?: string };

/** `error` as {@link TransferredError} (the store's own errors keep their fields; others keep message and SQLite code). */
export function errorToTransfer(error: unknown): TransferredError {
  if (error instanceof WrongIncarnationError) {
    const { stream, expected, actual, expectedIncarnation, actualIncarnation } = error;
    return { name: 'WrongIncarnationError', stream, expected, actual, expectedIncarnation, actualIncarnation };
  }
  if (error instanceof WrongExpectedRevisionError)
    return { name: 'WrongExpectedRevisionError', stream: error.stream, expected: error.expected, actual: error.actual };
  if (error instanceof DuplicateEventIdError) return { name: error.name, stream: error.stream, eventId: error.eventId };
  if (error instanceof EventStoreUnavailableError) return { name: 'EventStoreUnavailableError', message: error.message };
  const code = (error as { code?: unknown })?.code;
  return { name: 'Error', message: error instanceof Error ? error.message : String(error), ...(typeof code === 'string' ? { code } : {}) };
}

/** The error `transferred` describes, of the same class as the one sent (a plain Error keeps its `code`). */
export function errorFromTransfer(transferred: TransferredError): Error {
  switch (transferred.name) {
    case 'WrongExpectedRevisionError':
      return new WrongExpectedRevisionError(transferred.stream, transferred.expected, transferred.actual);
    case 'WrongIncarnationError':
      return new WrongIncarnationError(
        transferred.stream,
        transferred.expected,
        transferred.actual,
        transferred.expectedIncarnation,
        transferred.actualIncarnation,
      );
    case 'DuplicateEventIdError':
      return new DuplicateEventIdError(transferred.stream, transferred.eventId);
    case 'EventStoreUnavailableError':
      return new EventStoreUnavailableError(transferred.message);
    default:
      return Object.assign(new Error(transferred.message), transferred.code === undefined ? {} : { code: transferred.code });
  }
}
