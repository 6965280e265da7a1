/**
 * Whether a follower of the log has read all of it although its checkpoint is below the head.
 * `headPosition` is the highest position ever assigned (SQLite, PostgreSQL: it still counts the
 * events of a deleted stream), so when the log ends with deleted events (an erasure interrupted
 * after its stream deletion, before its `SessionErased` record) a follower that never read them
 * has its checkpoint below the head, with nothing left to read, until the next append.
 */
import type { EventStore } from './event-store.port';

/**
 * The log's head (bigint) when `store` holds no event after `checkpoint` (an exclusive bigint
 * global position) up to it, else null (an event is left to read there, or the checkpoint is at or
 * past the head). The head is read first, then the event after `checkpoint`: every position up to
 * a head read was committed (or deleted) before the read, so none can appear there later, and a
 * follower at `checkpoint` may take the head as its checkpoint without ever skipping an event.
 * Two reads of the store.
 * @throws what `headPosition` and `readAll` throw (e.g. EventStoreUnavailableError).
 */
export async function headPastDeletedTail(store: Pick<EventStore, 'headPosition' | 'readAll'>, checkpoint: bigint): Promise<bigint | null> {
  const head = await store.headPosition();
  if (head <= checkpoint) return null;
  const [next] = await store.readAll({ fromPosition: checkpoint, maxCount: 1 });
  return next === undefined || next.position > head ? head : null;
}
