import type { EventStore, RecordedEvent } from '@lib/event-store';
import { nextTurn } from '../event-loop-turns';

/** Events read at a time, and handled between two turns given to the event loop, by {@link visitStreamUpTo}. */
export const STREAM_PAGE = 1000;

/**
 * Calls `visit` with each event of `stream` from its start (or from revision `from`, inclusive)
 * up to revision `upTo` (bigint, inclusive), in revision order, reading {@link STREAM_PAGE} events at a time and giving the event
 * loop a turn between pages: a 30,000-event session read and folded at once held every other
 * request ~1–2 s (newcomer ncnoisy F1). Stops early when `visit` returns false. A stream's
 * revisions never change; a deletion meanwhile leaves a page short, and the visit ends there (the
 * caller sees the last revision visited short of `upTo`). Resolves to the number of events visited
 * (0, reading nothing, when `upTo` is before `from`).
 */
export async function visitStreamUpTo(
  store: EventStore,
  stream: string,
  upTo: bigint,
  visit: (event: RecordedEvent) => boolean | void,
  from: bigint | 'start' = 'start',
): Promise<number> {
  let next: bigint | 'start' = from;
  let visited = 0;
  for (;;) {
    // Events left from `next` to `upTo` (fewer when the stream starts later: a session written
    // again after an erasure continues after the erased revisions).
    const left = upTo - (next === 'start' ? -1n : next - 1n);
    if (left <= 0n) return visited;
    const maxCount = left < BigInt(STREAM_PAGE) ? Number(left) : STREAM_PAGE;
    // Bounded at `upTo`, so a store reads that range only (see ReadStreamOptions.toRevision).
    const page = await store.readStream(stream, { fromRevision: next, maxCount, toRevision: upTo });
    for (const event of page) {
      if (event.revision > upTo) return visited;
      visited++;
      if (visit(event) === false) return visited;
    }
    if (page.length < maxCount || page[page.length - 1].revision >= upTo) return visited;
    next = page[page.length - 1].revision + 1n;
    await nextTurn();
  }
}
