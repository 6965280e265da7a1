import type { RecordedEvent } from './event-store.port';

/**
 * Where one append ends in the global log, as far as two neighbouring events tell.
 *
 * The SQLite and PostgreSQL stores write the events of one append at consecutive global positions
 * (SQLite: one writer; PostgreSQL: `es_append_v2` takes the positions of the whole append at once) in
 * one transaction, so a reader sees a whole append or none of it. A cut of the log between `last`
 * and `next` therefore falls between two appends when `next` is of another stream, or does not
 * follow `last` (position and revision both one more), or when nothing follows `last` yet (the
 * log's head, as one read saw it). When `next` does follow `last` in the same stream, the cut may
 * fall inside an append (or between two appends of that stream: the log does not say which), e.g.
 * between a compaction's `EventsArchived` and its summary. KurrentDB's positions are byte offsets
 * of its transaction log, never one apart: there this is always false (its subscription is pushed,
 * and a batch ends where the pushed events pause).
 *
 * Readers that apply the log in batches (the projector) cut only where this is false, so no
 * reader of the read models ever sees part of an append (DESIGN §3.2, §4: a decision is one
 * append and never half-applied).
 *
 * @param last the last event before the cut
 * @param next the event right after it in the read, or `undefined` when the read ended there
 */
export function mayContinueAppend(last: RecordedEvent, next: RecordedEvent | undefined): boolean {
  return next !== undefined && next.streamId === last.streamId && next.position === last.position + 1n && next.revision === last.revision + 1n;
}

/** A page completed by {@link completeLastAppend} reads on at most this many times its size. */
export const MAX_APPEND_COMPLETION_PAGES = 4;

/**
 * Completes a full page of the global log (one read of `pageSize` events) up to the end of the
 * append its last event belongs to: reads on, `pageSize` events at a time, and keeps the events
 * that may continue that append (see {@link mayContinueAppend}). A page that was not full ends at
 * the log's head as its read saw it, which is always the end of an append, and is returned as is.
 *
 * One stream written with no other stream in between for more than
 * {@link MAX_APPEND_COMPLETION_PAGES} × `pageSize` events past the page (a single session
 * importing thousands of events while nothing else writes) may still be cut inside an append;
 * the page then holds at most (1 + {@link MAX_APPEND_COMPLETION_PAGES}) × `pageSize` events.
 *
 * @param page events in global order, as read
 * @param pageSize the `maxCount` the page was read with (1 or more)
 * @param readAfter reads at most `maxCount` events of the log after `position` (exclusive), in global order
 */
export async function completeLastAppend(
  page: RecordedEvent[],
  pageSize: number,
  readAfter: (position: bigint, maxCount: number) => Promise<RecordedEvent[]>,
): Promise<RecordedEvent[]> {
  if (page.length < pageSize || page.length === 0) return page;
  let completed = page;
  for (let reads = 0; reads < MAX_APPEND_COMPLETION_PAGES; reads++) {
    let last = completed[completed.length - 1];
    const more = await readAfter(last.position, pageSize);
    let taken = 0;
    while (taken < more.length && mayContinueAppend(last, more[taken])) last = more[taken++];
    if (taken > 0) completed = completed.concat(taken === more.length ? more : more.slice(0, taken));
    // The append ended inside what was read (another stream, or the log's head).
    if (taken < pageSize) break;
  }
  return completed;
}
