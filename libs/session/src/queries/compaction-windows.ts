/**
 * The two windows a compaction's diff compares (DESIGN §5, time travel): the window just before
 * its first decision event and just after its closing one, read from the log by the write side's
 * rule (`foldSessionUpTo`: from the last compaction decision before it, not from revision 0).
 */
import type { EventStore } from '@lib/event-store';
import { emptySessionWindow, evolveSessionWindow, orderedWindow, type StreamEvent, type WindowEntry } from '../domain/session-window';
import { foldSessionUpTo } from '../write-side/session-loader';
import { visitStreamUpTo } from '../write-side/stream-in-pages';
import { nextTurn } from '../event-loop-turns';

/** One side of a compaction: the ordered window right after `revision` (bigint). */
export interface WindowAtRevision {
  revision: bigint;
  entries: WindowEntry[];
}

/**
 * The window of session stream `stream` right after revision `firstRevision - 1` (`before`: the
 * compaction's first decision event is at `firstRevision`) and right after `revision` (`after`: its
 * closing event), both bigint, in window order. `before` is folded from the last compaction
 * decision before `firstRevision` (empty when the stream holds no event before it); `after` is the
 * same state folded on through the decision's own events. Reads O(window before + events since the
 * previous decision + the decision's events), a page at a time, and orders each window on a turn of
 * its own (its entries are never changed by a fold, only added to or removed from the state: the
 * ordered copy stays the window before). Rejects with the store's errors.
 */
export async function compactionWindows(
  store: EventStore,
  stream: string,
  firstRevision: bigint,
  revision: bigint,
): Promise<{ before: WindowAtRevision; after: WindowAtRevision }> {
  const state = (await foldSessionUpTo(store, stream, firstRevision - 1n)) ?? emptySessionWindow();
  await nextTurn();
  const before = orderedWindow(state);
  await nextTurn();
  await visitStreamUpTo(store, stream, revision, (e: StreamEvent): void => void evolveSessionWindow(state, e), firstRevision);
  await nextTurn();
  return { before: { revision: firstRevision - 1n, entries: before }, after: { revision, entries: orderedWindow(state) } };
}
