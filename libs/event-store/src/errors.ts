import type { ExpectedRevision } from './event-store.port';

/**
 * The stream's state did not match the append's expected revision. Nothing was written.
 * `actual` is the revision of the stream's last event (bigint) or `'no_stream'`.
 */
export class WrongExpectedRevisionError extends Error {
  override readonly name = 'WrongExpectedRevisionError';
  constructor(
    readonly stream: string,
    readonly expected: ExpectedRevision,
    readonly actual: bigint | 'no_stream',
  ) {
    super(`wrong expected revision on ${stream}: expected ${String(expected)}, actual ${String(actual)}`);
  }
}

/** An event id already exists in the store with other content (or in another stream). Nothing was written. */
export class DuplicateEventIdError extends Error {
  override readonly name = 'DuplicateEventIdError';
  constructor(
    readonly stream: string,
    readonly eventId: string,
  ) {
    super(`event id ${eventId} already exists in ${stream} with other content`);
  }
}

/** The store cannot be reached or failed for a reason unrelated to the request. */
export class EventStoreUnavailableError extends Error {
  override readonly name = 'EventStoreUnavailableError';
  constructor(
    message: string,
    override readonly cause?: unknown,
  ) {
    super(message);
  }
}
