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
 * The stored row of `event` for an append to `stream`, the one rule every store applies to find
 * an event already written (an idempotent resend): the row stored under its id; else the row
 * stored under one of its former ids (`EventData.formerIds`: the id an earlier build derived for
 * the same event, `deterministicEventIdForms`) when that row is in `stream` itself. A row of
 * `stream` is in its current life: the stores that look former ids up (SQLite, PostgreSQL) delete
 * an erased life's events and keep only the stream's name and last revision, so an id of an
 * erased life is never found and never taken for a resend (its event is written again, in the
 * new life). A former id stored in another stream is not this event (undefined: written as new).
 * `lookup` reads one id's row (undefined when not stored).
 */
export function storedRowOf(stream: string, event: SerializedEvent, lookup: (id: string) => StoredEventRow | undefined): StoredEventRow | undefined {
  const row = lookup(event.id);
  if (row !== undefined) return row;
  for (const former of event.formerIds ?? []) {
    const stored = lookup(former);
    if (stored !== undefined && stored.stream === stream) return stored;
  }
  return undefined;
}

/** Every id `events` may be stored under (their ids, then their former ids), for a store's one existence check. */
export function lookedUpIds(events: readonly SerializedEvent[]): string[] {
  return [...events.map((e) => e.id), ...events.flatMap((e) => e.formerIds ?? [])];
}

/**
 * Decides what an append whose ids (some or all) already exist in the store means, the same way
 * for every adapter with its own schema. It is an idempotent retry when every id is in `stream`,
 * in order, contiguous, starting right after the expected revision (at the stream's first event
 * for `no_stream`, anywhere for `any`/`stream_exists`), with identical type, data and metadata: the original result is returned
 * and nothing must be written.
 *
 * @param existing the stored row of each of `events` (same order, by {@link storedRowOf}), undefined when not stored
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
