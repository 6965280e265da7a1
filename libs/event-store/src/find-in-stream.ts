import type { EventStore, RecordedEvent } from './event-store.port';

/**
 * The newest event of `stream` for which `match` holds, or null. Reads the stream backwards in
 * pages of `pageSize` events, from `fromRevision` (inclusive; default the end), so an event near
 * the end (a retry, a redelivery) is found after one read; a miss reads the whole stream. May
 * reject with the store's errors.
 */
export async function findInStream(
  store: EventStore,
  stream: string,
  match: (event: RecordedEvent) => boolean,
  pageSize = 256,
  fromRevision: bigint | 'end' = 'end',
): Promise<RecordedEvent | null> {
  let from: bigint | 'end' = fromRevision;
  for (;;) {
    const page = await store.readStream(stream, { direction: 'backwards', fromRevision: from, maxCount: pageSize });
    const found = page.find(match);
    if (found) return found;
    const oldest = page[page.length - 1];
    if (!oldest || oldest.revision === 0n || page.length < pageSize) return null;
    from = oldest.revision - 1n;
  }
}
