/**
 * Which of some ids a session's log carries, up to a revision: the lookups the write side makes on
 * an error path only, for what its state does not carry (archived events, DESIGN §4: the state
 * stays O(active window)). Shared by {@link callIdsInLog} and {@link clientIdsInLog}.
 */
import type { SessionEvent } from '@lib/compaction';
import { findInStream, type EventStore } from '@lib/event-store';
import { CONVERSATION_EVENT, type ConversationEventData } from '../events/session-stream-events';

/**
 * Id → stream revision (bigint) of the newest conversation event of `stream` at or before `upTo`
 * for which `idsOf` yields it, for each of `ids` found. Reads backwards from `upTo` in pages and
 * stops once every id is found; a miss reads the stream to its start (O(events up to `upTo`)).
 * Rejects with the store's errors.
 */
export async function idsInLog(
  store: EventStore,
  stream: string,
  ids: ReadonlySet<string>,
  upTo: bigint,
  idsOf: (event: SessionEvent) => Iterable<string>,
): Promise<Map<string, bigint>> {
  const found = new Map<string, bigint>();
  if (ids.size === 0) return found;
  await findInStream(
    store,
    stream,
    (recorded) => {
      if (recorded.type !== CONVERSATION_EVENT) return false;
      for (const id of idsOf((recorded.data as ConversationEventData).event)) if (ids.has(id) && !found.has(id)) found.set(id, recorded.revision);
      return found.size === ids.size;
    },
    256,
    upTo,
  );
  return found;
}
