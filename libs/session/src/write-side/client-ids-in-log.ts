/**
 * Where a session's log holds some client event ids, up to a revision: what an append needs to
 * recognise a resend of events a compaction archived before the snapshot its state was loaded from
 * (the state's `revisionsById` covers only the part it folded, DESIGN §4). Read only on the path
 * where the tool-call rules refuse an append, so a resend is answered as one (its original result)
 * instead of refused against calls that came after it.
 */
import type { EventStore } from '@lib/event-store';
import { idsInLog } from './ids-in-log';

/**
 * Client id → stream revision (bigint) of each of `ids` that a conversation event of `stream` at
 * or before `upTo` carries (see {@link idsInLog}: a miss reads the stream to its start). Rejects
 * with the store's errors.
 */
export function clientIdsInLog(store: EventStore, stream: string, ids: ReadonlySet<string>, upTo: bigint): Promise<Map<string, bigint>> {
  return idsInLog(store, stream, ids, upTo, (event) => [event.id]);
}
