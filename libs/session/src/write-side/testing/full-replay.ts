/**
 * Time travel by a fold of the whole log from revision 0: what `loadSessionWindowAt` and the
 * compaction diff computed before they started from the last compaction decision (newcomer
 * nclongrun F2). The oracle of the property spec that checks they give the same windows, and the
 * baseline of `bench/time-travel-cost.ts`. Not used by the service.
 */
import type { EventStore } from '@lib/event-store';
import { sessionStream } from '../../events/session-stream-events';
import { emptySessionWindow, evolveSessionWindow, orderedWindow, type SessionWindowState, type StreamEvent } from '../../domain/session-window';
import { AtomicDecisionTracker } from '../../domain/atomic-decisions';
import { cloneSessionWindow } from '../../domain/clone-session-window';
import { nextTurn } from '../../event-loop-turns';
import { visitStreamUpTo } from '../stream-in-pages';
import type { WindowAtRevision } from '../../queries/compaction-windows';

/**
 * The state of `sessionId` (a `sessionKey`) right after `revision`, or after the atomic decision
 * holding it, folded from the stream's first event (its revision as the incarnation); null when
 * the stream holds no event at or before `revision`. The code of `loadSessionWindowAt` before
 * newcomer nclongrun F2.
 */
export async function replaySessionWindowAt(store: EventStore, sessionId: string, revision: bigint): Promise<SessionWindowState | null> {
  const stream = sessionStream(sessionId);
  const decisions = new AtomicDecisionTracker();
  const state = emptySessionWindow();
  let first = true;
  const visited = await visitStreamUpTo(store, stream, revision, (e) => {
    if (first) state.incarnation = e.revision;
    first = false;
    decisions.observe(state, e);
    evolveSessionWindow(state, e);
  });
  if (visited === 0) return null;
  if (!decisions.inside) return state;
  const atRevision = cloneSessionWindow(state);
  let from = state.revision! + 1n;
  for (;;) {
    const page = await store.readStream(stream, { fromRevision: from, maxCount: 32 });
    for (const e of page) {
      if (!decisions.continues(e)) return atRevision;
      decisions.observe(state, e);
      evolveSessionWindow(state, e);
      if (!decisions.inside) return state;
    }
    if (page.length < 32) return atRevision;
    from = page[page.length - 1].revision + 1n;
  }
}

/**
 * The windows right after `firstRevision - 1` and right after `revision` of session stream
 * `stream`, folded from its first event: the diff's code before newcomer nclongrun F2.
 */
export async function replayCompactionWindows(
  store: EventStore,
  stream: string,
  firstRevision: bigint,
  revision: bigint,
): Promise<{ before: WindowAtRevision; after: WindowAtRevision }> {
  const state = emptySessionWindow();
  const fold = (e: StreamEvent): void => void evolveSessionWindow(state, e);
  await visitStreamUpTo(store, stream, firstRevision - 1n, fold);
  await nextTurn();
  const before = orderedWindow(state);
  await visitStreamUpTo(store, stream, revision, fold, firstRevision);
  return { before: { revision: firstRevision - 1n, entries: before }, after: { revision, entries: orderedWindow(state) } };
}
