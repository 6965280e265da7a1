/**
 * Which of some tool-call ids a session's log holds calls for, up to a revision: what
 * `decideAppend` needs to tell a second answer to an archived, answered call (`tool_call_conflict`)
 * from an answer to a call the session never made (`unknown_tool_call`). The session state does
 * not carry archived calls (it stays O(active window), DESIGN §4), so this reads the log: only on
 * that error path.
 */
import type { EventStore } from '@lib/event-store';
import type { SessionEvent } from '@lib/compaction';
import { idsInLog } from './ids-in-log';

/** The ids of every tool response in `events` (the calls an append answers). */
export function answeredCallIds(events: Iterable<SessionEvent>): Set<string> {
  const ids = new Set<string>();
  for (const e of events) if (e.type === 'tool') for (const r of e.responses) ids.add(r.toolCallId);
  return ids;
}

/**
 * The ids among `ids` that an assistant event of `stream` at or before `upTo` calls, archived or
 * not. Reads backwards from `upTo` and stops once every id is found; a miss reads the stream to its
 * start (O(events up to `upTo`)). Rejects with the store's errors.
 */
export async function callIdsInLog(store: EventStore, stream: string, ids: ReadonlySet<string>, upTo: bigint): Promise<Set<string>> {
  const found = await idsInLog(store, stream, ids, upTo, (event) => (event.type === 'assistant' ? (event.toolCalls ?? []).map((call) => call.id) : []));
  return new Set(found.keys());
}
