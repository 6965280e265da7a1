/**
 * Where a session's log holds some client event ids, up to a revision: what an append needs to
 * recognise a resend of events a compaction archived before the snapshot its state was loaded from
 * (the state's `revisionsById` covers only the part it folded, DESIGN §4). Read only on the path
 * where the tool-call rules refuse an append, so a resend is answered as one (its original result)
 * instead of refused against calls that came after it.
 */
import { findInStream, type EventStore } from '@lib/event-store';
import { CONVERSATION_EVENT, type ConversationEventData } from '../events/session-stream-events';

/**
 * Client id → stream revision (bigint) of each of `ids` that a conversation event of `stream` at
 * or before `upTo` carries. Reads backwards from `upTo` in pages and stops once every id is found; a
 * miss reads the stream to its start (O(events up to `upTo`)). Rejects with the store's errors.
 */
export async function clientIdsInLog(store: EventStore, stream: string, ids: ReadonlySet<string>, upTo: bigint): Promise<Map<string, bigint>> {
  const found = new Map<string, bigint>();
  if (ids.size === 0) return found;
  await findInStream(
    store,
    stream,
    (recorded) => {
      if (recorded.type !== CONVERSATION_EVENT) return false;
      const id = (recorded.data as ConversationEventData).event.id;
      if (ids.has(id)) found.set(id, recorded.revision);
      return found.size === ids.size;
    },
    256,
    upTo,
  );
  return found;
}
