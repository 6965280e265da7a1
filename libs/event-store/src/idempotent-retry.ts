import type { SerializedEvent } from './append-input';
import { satisfies } from './append-input';
import { DuplicateEventIdError, WrongExpectedRevisionError } from './errors';
import type { AppendResult, ExpectedRevision } from './event-store.port';

/** A stored event as an adapter reads it back to recognise a retry: JSON kept as text. */
export interface StoredEventRow {
  position: bigint;
  stream: string;
  revision: bigint;
  type: string;
  /** JSON text, exactly as written. */
  data: string;
  /** JSON text, or null when the event had no metadata. */
  metadata: string | null;
}

/**
 * Decides what an append whose ids (some or all) already exist in the store means, the same way
 * for every adapter with its own schema. It is an idempotent retry when every id is in `stream`,
 * in order, contiguous, starting right after the expected revision (at the stream's first event
 * for `no_stream`, anywhere for `any`/`stream_exists`), with identical type, data and metadata: the original result is returned
 * and nothing must be written.
 *
 * @param existing the stored row of each of `events` (same order), undefined when that id is not stored
 * @param current the stream's current revision (bigint), or null when it does not exist
 * @param firstRevision the revision of the stream's first stored event (bigint), or null when it has
 *   none: `no_stream` is in place when the events start there (0n, or after the revisions of a
 *   deleted stream, which are never reused)
 * @throws DuplicateEventIdError when an id exists with other content or at another place
 * @throws WrongExpectedRevisionError when it is not a retry and the stream does not satisfy `expected`
 */
export function resolveExistingIds(
  stream: string,
  events: SerializedEvent[],
  expected: ExpectedRevision,
  current: bigint | null,
  existing: (StoredEventRow | undefined)[],
  firstRevision: bigint | null,
): AppendResult {
  const first = existing[0];
  const inPlace =
    first !== undefined &&
    existing.every((row, i) => row !== undefined && row.stream === stream && row.revision === first.revision + BigInt(i)) &&
    (expected === 'any' ||
      expected === 'stream_exists' ||
      (expected === 'no_stream' && first.revision === firstRevision) ||
      (typeof expected === 'bigint' && first.revision === expected + 1n));
  if (inPlace) {
    const differing = events.findIndex((e, i) => {
      const row = existing[i] as StoredEventRow;
      return row.type !== e.type || row.data !== e.data || row.metadata !== e.metadata;
    });
    if (differing >= 0) throw new DuplicateEventIdError(stream, events[differing].id);
    const last = existing[existing.length - 1] as StoredEventRow;
    return { nextExpectedRevision: last.revision, position: last.position };
  }
  if (!satisfies(expected, current)) throw new WrongExpectedRevisionError(stream, expected, current ?? 'no_stream');
  const clash = events.find((_, i) => existing[i] !== undefined) as SerializedEvent;
  throw new DuplicateEventIdError(stream, clash.id);
}
