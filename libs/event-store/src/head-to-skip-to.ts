/**
 * Where a follower of the log (a projector, a rebuild) may move its checkpoint when the log ends
 * with events it never read and never will: events deleted before it read them (an erasure
 * interrupted after its stream deletion, before its `SessionErased` record). SQLite and
 * PostgreSQL count them in the head, so without this the follower stays below the head, with
 * nothing left to read, until the next append.
 */
import type { EventStore } from './event-store.port';

/**
 * The store's readable head (bigint) when no event is left to read after exclusive checkpoint
 * `checkpoint` (bigint) up to it, else null (an event is left there, or the checkpoint is at or
 * past it). The readable head is read first, then the event after `checkpoint`: every event up to
 * that head that will ever exist was visible to the read that followed (see
 * {@link EventStore.readableHead}), so a follower at `checkpoint` may take the answer as its
 * checkpoint without ever skipping an event (`readableHead`: that head when the caller read it just
 * before, saving a read). Reading the head second, or taking
 * {@link EventStore.headPosition}, may skip a whole append (SQLite's writer thread: a batch
 * committed whose answer has not arrived, not yet readable). Two reads of the store at most.
 * @throws what `readableHead` and `readAll` throw (e.g. EventStoreUnavailableError).
 */
export async function headToSkipTo(store: Pick<EventStore, 'readableHead' | 'readAll'>, checkpoint: bigint, readableHead?: bigint): Promise<bigint | null> {
  const head = readableHead ?? (await store.readableHead());
  if (head <= checkpoint) return null;
  const [next] = await store.readAll({ fromPosition: checkpoint, maxCount: 1 });
  return next === undefined || next.position > head ? head : null;
}
