/**
 * Time travel by time (`atTime`): which revision of a session's log was the last one recorded at
 * or before an instant. The one rule every layer answers `atTime` with (the window route, and the
 * audit page through it).
 */
import { findInStream, type EventStore } from '@lib/event-store';
import { sessionStream } from '../events/session-stream-events';

/** The event an `atTime` resolved to: its stream revision and when the store recorded it. */
export interface RevisionAtTime {
  /** The revision (bigint) of the last event whose `recordedAt` is at or before the time asked. */
  revision: bigint;
  /** That event's `recordedAt` (the store's `created`, to the millisecond). */
  recordedAt: Date;
}

/**
 * Whether an event recorded at `recordedAt` (ms precision) was recorded at or before `at`, an
 * ISO-8601 date-time with `Z` or an offset (as the API's date-time rule accepts it). Digits of
 * `at` past the millisecond cannot make a recorded time (whole milliseconds) later than it, so
 * `at` is compared cut to the millisecond: `…00.9915Z` includes an event recorded at `…00.991Z`.
 * @throws RangeError when `at` is not a date-time `Date` reads (callers validate it first).
 */
export function recordedAtOrBefore(recordedAt: Date, at: string): boolean {
  const limit = Date.parse(at);
  if (Number.isNaN(limit)) throw new RangeError(`not a date-time: ${at}`);
  return recordedAt.getTime() <= limit;
}

/**
 * The last event of session `key` (a `sessionKey`) in revision order whose `recordedAt` is at or
 * before `at` (see {@link recordedAtOrBefore}), or null when there is none: the session has no
 * event (never written, or erased), or its first event was recorded after `at`. "Last in revision
 * order" holds also when the store's clock stepped back (README, Clock jumps): the answer is the
 * highest revision recorded at or before `at`. Reads the log backwards from its end (one read of
 * a page when `at` is at or after the last event); a time before the session reads it all.
 * May reject with the store's errors.
 */
export async function revisionAtTime(store: EventStore, key: string, at: string): Promise<RevisionAtTime | null> {
  const found = await findInStream(store, sessionStream(key), (e) => recordedAtOrBefore(e.created, at));
  return found ? { revision: found.revision, recordedAt: found.created } : null;
}
