import { ErrorType } from '@kurrent/kurrentdb-client';
import { EventStoreUnavailableError, WrongExpectedRevisionError } from '../errors';
import type { ExpectedRevision } from '../event-store.port';

const UNAVAILABLE = new Set<string>([ErrorType.UNAVAILABLE, ErrorType.TIMEOUT, ErrorType.DEADLINE_EXCEEDED, ErrorType.NOT_LEADER, ErrorType.CANCELLED]);

/** The client's error type tag (`ErrorType`), or undefined for other errors. */
export function kurrentErrorType(error: unknown): string | undefined {
  const type = (error as { type?: unknown })?.type;
  return typeof type === 'string' ? type : undefined;
}

/** True for "stream not found" and "stream deleted" errors (a stream that reads as absent). */
export function isMissingStream(error: unknown): boolean {
  const type = kurrentErrorType(error);
  return type === ErrorType.STREAM_NOT_FOUND || type === ErrorType.STREAM_DELETED || type === ErrorType.NO_STREAM;
}

/**
 * A write (`write`: an `append` to `stream`, or its `deletion`) the server did not answer
 * (`unavailable`, mapped by {@link mapKurrentError}): the service does not run it again to learn
 * its outcome, so it may have been done ({@link EventStoreUnavailableError.mayHaveBeenWritten}).
 */
export function unansweredWrite(unavailable: EventStoreUnavailableError, write: 'append' | 'deletion', stream: string): EventStoreUnavailableError {
  const sent = write === 'append' ? `the append to ${stream}` : `the deletion of ${stream}`;
  return new EventStoreUnavailableError(
    `KurrentDB did not answer ${sent}, so it may have been written or not: send the same ${write} again unchanged (${write === 'append' ? 'with the same event ids it is answered as the original when it was written, and written now when it was not' : 'it is answered as done when it was'}); ${unavailable.message}`,
    unavailable.cause,
    true,
  );
}

/**
 * Maps a `@kurrent/kurrentdb-client` error to the port's errors: `WrongExpectedVersionError` →
 * {@link WrongExpectedRevisionError} with expected and actual (a deleted or tombstoned stream,
 * reported by the server as a negative revision, is `'no_stream'`); connection, timeout and
 * leadership errors → {@link EventStoreUnavailableError}; anything else is returned unchanged.
 */
export function mapKurrentError(error: unknown, stream?: string, expected?: ExpectedRevision): unknown {
  const type = kurrentErrorType(error);
  if (type === ErrorType.WRONG_EXPECTED_VERSION) {
    const actualState = (error as { actualState?: unknown }).actualState;
    const actual = typeof actualState === 'bigint' && actualState >= 0n ? actualState : 'no_stream';
    return new WrongExpectedRevisionError(stream ?? String((error as { streamName?: unknown }).streamName), expected ?? 'any', actual);
  }
  if (type !== undefined && UNAVAILABLE.has(type)) {
    return new EventStoreUnavailableError(`KurrentDB unavailable: ${(error as Error).message}`, error);
  }
  return error;
}
